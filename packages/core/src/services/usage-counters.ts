/**
 * @module Usage counters (docs/replies-and-streams.md#usage): how adapters keep a workspace's token
 * totals as per-day counters (a hash of field → integer per UTC day) updated with each stored reply
 * step, and how a read adds them up. One naming for every adapter.
 */
import type { UsageGroup, UsageRecord, UsageTotal } from '../ports/storage.js';

/** The first letter of a counter field per group; `x` counts the user group's steps without a user. */
const GROUP_LETTER: Record<UsageGroup, string> = { agent: 'a', model: 'm', user: 'u', day: 'd' };

/**
 * The counter increments of one reply step: per group (agent, model, user or "no user", the day),
 * fields `<letter>|<key>|i` (input tokens), `|o` (output tokens) and `|n` (steps).
 */
export function usageIncrements(usage: UsageRecord): Array<[field: string, increment: number]> {
  const groups = [`a|${usage.agentId}`, `m|${usage.model}`, usage.userId === null ? 'x|' : `u|${usage.userId}`, 'd|'];
  return groups.flatMap((group) => [
    [`${group}|i`, usage.inputTokens],
    [`${group}|o`, usage.outputTokens],
    [`${group}|n`, 1],
  ]);
}

/** The UTC day (`YYYY-MM-DD`) a message stored at `createdAt` (ISO 8601) is counted on. */
export const usageDay = (createdAt: string): string => createdAt.slice(0, 10);

/** Every UTC day from `from` to `to` (`YYYY-MM-DD`, both included), ascending. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00.000Z`); at <= Date.parse(`${to}T00:00:00.000Z`); at += 86_400_000)
    days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

/** Adds up the counters of `days` (day → its fields) into one total per group of `groupBy`, ascending by key (`null` first). */
export function usageTotals(
  days: ReadonlyMap<string, Readonly<Record<string, number>>>,
  groupBy: UsageGroup,
): UsageTotal[] {
  const letter = GROUP_LETTER[groupBy];
  const totals = new Map<string | null, UsageTotal>();
  for (const [day, fields] of days) {
    for (const [field, value] of Object.entries(fields)) {
      const first = field[0];
      if (first !== letter && !(groupBy === 'user' && first === 'x')) continue;
      const key = groupBy === 'day' ? day : first === 'x' ? null : field.slice(2, -2);
      let total = totals.get(key);
      if (!total) totals.set(key, (total = { key, inputTokens: 0, outputTokens: 0, replies: 0 }));
      const kind = field.at(-1);
      if (kind === 'i') total.inputTokens += Number(value);
      else if (kind === 'o') total.outputTokens += Number(value);
      else if (kind === 'n') total.replies += Number(value);
    }
  }
  return [...totals.values()].sort((a, b) =>
    a.key === b.key ? 0 : a.key === null ? -1 : b.key === null ? 1 : a.key < b.key ? -1 : 1,
  );
}
