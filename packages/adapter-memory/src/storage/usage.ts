/** @module Usage totals in memory: the day counters message appends keep, added up by core's `usageTotals`. */
import { daysBetween, usageTotals, type UsageStore } from '@parley/core/adapter';
import type { StoreContext } from './context.js';

/** `storage.usage` in memory. */
export function usageStore({ workspaceOf }: StoreContext): UsageStore {
  return {
    totals: async ({ workspaceId }, { from, to, groupBy }) => {
      const { usage } = workspaceOf(workspaceId);
      const days = new Map(
        daysBetween(from, to).flatMap((day) => (usage.has(day) ? [[day, usage.get(day)!] as const] : [])),
      );
      return usageTotals(days, groupBy);
    },
  };
}
