/** @module The rate-limit store port: one atomic decide-and-record operation. */

/** At most `limit` requests per `periodMs` milliseconds. */
export interface RateLimitRule {
  limit: number;
  periodMs: number;
}

/** The outcome of one {@link RateLimitStore.hit}. All durations are milliseconds. */
export interface RateLimitDecision {
  allowed: boolean;
  /** The rule's limit. */
  limit: number;
  /** Requests that would still be admitted right after this decision (0 when refused). */
  remaining: number;
  /** Time until the full `limit` is available again. */
  resetMs: number;
  /** 0 when allowed; otherwise time until one request would be admitted. */
  retryAfterMs: number;
}

/**
 * Where rate-limit state lives, keyed by an opaque string (the workspace id).
 *
 * `hit` must decide and record in ONE atomic step: with any number of concurrent callers, in one
 * process or across processes sharing the backend, no two calls may both see the same state
 * (a Lua script on Redis, a synchronous section in memory). A refused call records nothing, so
 * refusals never use up quota. The algorithm is GCRA (see `rate-limit/gcra.ts` in core), and
 * every adapter must give exactly the decisions of `gcra()` for the same inputs, with one rule for
 * time: a key's clock never runs backwards. A hit is decided at the later of its `nowMs` and the
 * latest `nowMs` the key admitted a hit at, because requests are stamped before they reach the
 * store and may reach it in another order (docs/rate-limits.md). A key's state (the TAT and that
 * time) may expire after the admitted decision's `resetMs` — not `periodMs`: a rounded-up emission
 * interval can put the TAT up to `limit − 1` ms beyond one period (O(1) memory per key).
 * Check an adapter with `runRateLimitStoreContract` from `@parley/core/testing`.
 */
export interface RateLimitStore {
  /** Counts one request at `nowMs` (ms since the epoch) against `rule` for `key`. */
  hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision>;
  /**
   * True when `hit` decides in this process's memory without any I/O, so it cannot hang: the
   * limiter then puts no deadline on it (`timeoutMs`), which spares every request a timer entry.
   * Absent: every hit races the limiter's deadline.
   */
  readonly inProcess?: boolean;
}
