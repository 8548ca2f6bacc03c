/** @module Plan agreement of API keys (docs/rate-limits.md), worded for start-up and `parley keys` messages. */
import { planEntryIssues, type PlanEntry } from '@parley/core';

/** A plan entry with how to name it in a message (`API_KEYS[2]`, `key key_…`). */
export type LabelledPlanEntry = PlanEntry & { label: string };

/**
 * Core's plan rules (docs/rate-limits.md) over `entries`, as messages naming entries by label: all keys
 * of a workspace agree on `plan` and `limitPerHour`, `enterprise` needs a limit. `[]` when none.
 */
export function keyPlanProblems(entries: ReadonlyArray<LabelledPlanEntry>): string[] {
  const label = (index: string | number) => entries[Number(index)]?.label ?? `entry ${index}`;
  return planEntryIssues(entries).map(({ path, message }) => {
    const named = message
      .replace(/ at (\d+) but /, (_, first: string) => ` in ${label(first)} but `)
      .replace(/ here$/, '');
    return `${label(path.split('.')[0]!)}: ${named}.`;
  });
}
