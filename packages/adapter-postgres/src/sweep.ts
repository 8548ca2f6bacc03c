/**
 * @module Retention without bloat: expired events, outbox rows, delivery attempts, idempotency
 * records and rate-limit rows deleted in bounded batches (`DELETE … WHERE ctid IN (SELECT ctid …
 * LIMIT n)`), so each statement is short, holds few locks, and vacuum keeps up: table sizes stay
 * flat under steady traffic.
 */
import { quoteSchema } from './schema.js';
import type { Sql } from './sql.js';

/** Rows deleted per statement. */
export const SWEEP_BATCH = 1000;

/**
 * Runs one sweep of `schema`: per table, batches of {@link SWEEP_BATCH} until a batch comes back
 * short or `maxBatches` ran. Returns how many rows were deleted.
 */
export async function sweep(sql: Sql, schema: string, retentionMs: number, maxBatches = 20): Promise<number> {
  const s = quoteSchema(schema);
  const cutoff = `now() - ${Math.round(retentionMs)}::bigint * interval '1 millisecond'`;
  const nowMs = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;
  const targets = [
    `${s}.events WHERE recorded_at < ${cutoff}`,
    `${s}.outbox WHERE recorded_at < ${cutoff}`,
    `${s}.deliveries WHERE recorded_at < ${cutoff}`,
    `${s}.idempotency_keys WHERE expires_at < clock_timestamp()`,
    `${s}.rate_limits WHERE tat < ${nowMs}`,
  ];
  let deleted = 0;
  for (const target of targets) {
    const [table, where] = target.split(' WHERE ') as [string, string];
    for (let batch = 0; batch < maxBatches; batch += 1) {
      const [row] = await sql.query<{ n: number }>(
        `WITH gone AS (DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE ${where} LIMIT ${SWEEP_BATCH}) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
      );
      deleted += row?.n ?? 0;
      if ((row?.n ?? 0) < SWEEP_BATCH) break;
    }
  }
  return deleted;
}
