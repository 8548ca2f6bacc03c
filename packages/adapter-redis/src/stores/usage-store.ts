/** @module Usage totals on Redis: one HASH of counters per workspace and UTC day, written by message appends (message-store.lua.ts). */
import { daysBetween, usageTotals, type UsageGroup, type UsageStore, type UsageTotal } from '@parley/core/adapter';
import type { WorkspaceScope } from '@parley/core';
import { workspaceKeys } from '../keys.js';
import type { EventLog } from './event-log.js';

/**
 * {@link UsageStore} on Redis: a read is one pipelined HGETALL per day asked for (at most 366),
 * never a scan of messages.
 */
export function usageStore({ runner }: EventLog): UsageStore {
  return {
    async totals(
      { workspaceId }: WorkspaceScope,
      query: { from: string; to: string; groupBy: UsageGroup },
    ): Promise<UsageTotal[]> {
      const keys = workspaceKeys(runner.prefix, workspaceId);
      const days = daysBetween(query.from, query.to);
      const replies = await runner.run(async (client) => {
        const pipeline = client.pipeline();
        for (const day of days) pipeline.hgetall(keys.usage(day));
        return (await pipeline.exec()) ?? [];
      });
      const counters = new Map<string, Record<string, number>>();
      replies.forEach(([error, fields], index) => {
        if (error) throw error;
        const entries = Object.entries(fields as Record<string, string>);
        if (entries.length > 0)
          counters.set(days[index]!, Object.fromEntries(entries.map(([field, value]) => [field, Number(value)])));
      });
      return usageTotals(counters, query.groupBy);
    },
  };
}
