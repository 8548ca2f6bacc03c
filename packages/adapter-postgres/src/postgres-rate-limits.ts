/**
 * @module GCRA on PostgreSQL: core's `gcra()` (rate-limit/gcra.ts) decided and recorded by one
 * upsert per hit, so concurrent callers in any number of processes never see the same state (the
 * row lock of ON CONFLICT DO UPDATE orders them). The hits of concurrent requests travel together:
 * one statement (`rate_limit_hits`, migration 0005) per batch. Integer milliseconds throughout, as
 * in `gcra()`.
 */
import {
  emissionIntervalMs,
  type RateLimitDecision,
  type RateLimitRule,
  type RateLimitStore,
} from '@parley/core/adapter';
import { Batcher } from './batch.js';
import { isUnavailable } from './faults.js';
import { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
import type { Sql } from './sql.js';

/** Settings of {@link PostgresRateLimitStore}. */
export interface PostgresRateLimitStoreOptions {
  sql: Sql;
  /** Default `parley`. */
  schema?: string;
}

interface Hit {
  key: string;
  nowMs: number;
  /** The rule's emission interval and tolerance (`limit − 1` intervals), in ms. */
  interval: number;
  tolerance: number;
  limit: number;
}

/**
 * {@link RateLimitStore} on PostgreSQL or PGlite. The row keeps the TAT, whether the last hit
 * was admitted and the latest `nowMs` it was hit at; the decision is rebuilt exactly as `gcra()`
 * makes it (a refused hit leaves the TAT as it was) at the later of the caller's `nowMs` and that
 * one. Concurrent hits queue on the row's lock, so a hit whose `nowMs` was read a moment before
 * another's may be decided after it: deciding it at the later time keeps the key's clock
 * monotonic, so the admitted hits of a burst report strictly decreasing `remaining` (and hosts
 * whose clocks differ slightly agree). Rows whose TAT is past mean "full quota", as a missing row
 * does; the storage sweep deletes them.
 *
 * Hits made while this store's previous statement is in flight go out together in one statement
 * (see {@link Batcher}), each still its own upsert, in the order they were made. A failed statement
 * rejects every hit it carried; the rate limiter's failure policy then decides each of them, as it
 * would a single failed hit.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  private readonly batches: Batcher<Hit, RateLimitDecision>;

  constructor(options: PostgresRateLimitStoreOptions) {
    const s = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
    this.batches = new Batcher((hits) => decide(options.sql, s, hits), { failsWaiting: isUnavailable });
  }

  async hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    const interval = emissionIntervalMs(rule);
    if (!Number.isSafeInteger(nowMs)) throw new RangeError(`nowMs must be an integer number of ms, got ${nowMs}`);
    return this.batches.add({ key, nowMs, interval, tolerance: (rule.limit - 1) * interval, limit: rule.limit });
  }
}

/** One statement deciding `hits` in order; the decisions in the same order. */
async function decide(sql: Sql, s: string, hits: Hit[]): Promise<RateLimitDecision[]> {
  // Sent sorted by key (a stable sort: one key's hits keep their order), so two processes'
  // statements lock the rows they share in the same order and cannot deadlock.
  const order = hits
    .map((_, i) => i)
    .sort((a, b) => (hits[a]!.key < hits[b]!.key ? -1 : hits[a]!.key > hits[b]!.key ? 1 : a - b));
  const sent = order.map((i) => hits[i]!);
  const rows = await sql.query<{ ord: number; decided_tat: number; decided_allowed: boolean; decided_at: number }>(
    `SELECT ord, decided_tat, decided_allowed, decided_at FROM ${s}.rate_limit_hits($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) ORDER BY ord`,
    [
      sent.map((hit) => hit.key),
      sent.map((hit) => hit.nowMs),
      sent.map((hit) => hit.interval),
      sent.map((hit) => hit.tolerance),
    ],
  );
  const decisions: RateLimitDecision[] = new Array(hits.length);
  for (const row of rows) {
    const index = order[row.ord - 1]!;
    decisions[index] = decision(hits[index]!, row.decided_allowed, row.decided_tat - row.decided_at);
  }
  return decisions;
}

/** `gcra()`'s decision from the key's state after the hit: `debt` = TAT − the time it was decided at. */
function decision(hit: Hit, allowed: boolean, debt: number): RateLimitDecision {
  if (!allowed)
    return { allowed: false, limit: hit.limit, remaining: 0, resetMs: debt, retryAfterMs: debt - hit.tolerance };
  return {
    allowed: true,
    limit: hit.limit,
    remaining: Math.floor((hit.limit * hit.interval - debt) / hit.interval),
    resetMs: debt,
    retryAfterMs: 0,
  };
}
