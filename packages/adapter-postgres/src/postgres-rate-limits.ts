/**
 * @module GCRA on PostgreSQL: core's `gcra()` (rate-limit/gcra.ts) decided and recorded in one
 * upsert, so concurrent callers in any number of processes never see the same state (the row lock
 * of ON CONFLICT DO UPDATE orders them). Integer milliseconds throughout, as in `gcra()`.
 */
import { emissionIntervalMs, type RateLimitDecision, type RateLimitRule, type RateLimitStore } from '@parley/core';
import { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
import type { Sql } from './sql.js';

/** Settings of {@link PostgresRateLimitStore}. */
export interface PostgresRateLimitStoreOptions {
  sql: Sql;
  /** Default `parley`. */
  schema?: string;
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
 */
export class PostgresRateLimitStore implements RateLimitStore {
  private readonly sql: Sql;
  private readonly s: string;

  constructor(options: PostgresRateLimitStoreOptions) {
    this.sql = options.sql;
    this.s = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
  }

  async hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    const interval = emissionIntervalMs(rule);
    if (!Number.isSafeInteger(nowMs)) throw new RangeError(`nowMs must be an integer number of ms, got ${nowMs}`);
    const tolerance = (rule.limit - 1) * interval;
    // $2 now, $3 interval, $4 tolerance; SET expressions all see the row as it was, and `n` is the
    // key's clock: the later of $2 and the row's `now_ms`.
    const n = `greatest(r.now_ms, $2::bigint)`;
    const [row] = await this.sql.query<{ tat: string; allowed: boolean; now_ms: string }>(
      `INSERT INTO ${this.s}.rate_limits AS r (key, tat, allowed, now_ms) VALUES ($1, $2::bigint + $3::bigint, true, $2::bigint)
       ON CONFLICT (key) DO UPDATE SET
         allowed = greatest(r.tat, ${n}) - ${n} <= $4::bigint,
         tat = CASE WHEN greatest(r.tat, ${n}) - ${n} <= $4::bigint THEN greatest(r.tat, ${n}) + $3::bigint ELSE r.tat END,
         now_ms = ${n}
       RETURNING tat, allowed, now_ms`,
      [key, nowMs, interval, tolerance],
    );
    const { allowed } = row!;
    const debt = Number(row!.tat) - Number(row!.now_ms);
    if (!allowed) return { allowed: false, limit: rule.limit, remaining: 0, resetMs: debt, retryAfterMs: debt - tolerance };
    return { allowed: true, limit: rule.limit, remaining: Math.floor((rule.limit * interval - debt) / interval), resetMs: debt, retryAfterMs: 0 };
  }
}
