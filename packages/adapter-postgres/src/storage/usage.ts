/**
 * @module Usage totals on PostgreSQL (docs/replies-and-streams.md#usage): the counters a reply
 * step's append updates (migrations/0003_usage.sql), added up per group by core's `usageTotals`.
 * A read is one indexed range scan of the primary key over the days asked for: its cost grows with
 * the days and groups, never with the history.
 */
import { usageTotals, type UsageStore } from '@parley/core/adapter';
import type { StoreContext } from './context.js';

/** `storage.usage` on PostgreSQL. */
export function usageStore({ sql, s }: StoreContext): UsageStore {
  return {
    totals: async ({ workspaceId }, { from, to, groupBy }) => {
      const rows = await sql.query<{ day: string; fields: Record<string, number> }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, jsonb_object_agg(field, value) AS fields
         FROM ${s}.usage_counters WHERE workspace_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY day`,
        [workspaceId, from, to],
      );
      return usageTotals(new Map(rows.map((row) => [row.day, row.fields])), groupBy);
    },
  };
}
