/**
 * @module GCRA, the Generic Cell Rate Algorithm, as one pure function every rate-limit store runs.
 *
 * Why GCRA:
 * - Exact for bursts: from any state, at most `limit` requests are admitted at one instant, and a
 *   store that applies {@link gcra} atomically (a synchronous section in memory, one Lua script
 *   on Redis) keeps that true whatever the concurrency, across processes too.
 * - O(1) memory: the whole state of a key is one integer, its theoretical arrival time (TAT),
 *   which may be dropped once it is in the past (a TTL of `decision.resetMs`).
 * - Smooth refill: quota comes back one request every emission interval, not all at once at a
 *   window edge, so clients are not invited to stampede at the top of the hour.
 *
 * Its error bound, stated honestly: GCRA limits the *rate* and the *burst*, not the count in
 * every rolling window. A client that spends a full burst of `limit` and then keeps sending as the
 * quota refills gets up to `2·limit − 1` requests admitted within one window of `periodMs` (the
 * burst, then `limit − 1` refills before the window closes). Only a sliding log (one timestamp per
 * admitted request, O(limit) memory and an O(log limit) trim per hit) bounds every rolling window
 * to `limit`; at 1 000 requests per hour per workspace across several instances that is 1 000
 * Redis entries per workspace against one integer. The long-run rate is still exactly `limit` per
 * `periodMs`, and no instant ever sees more than `limit` in one go — the accepted trade-off.
 *
 * Arithmetic: every value is an integer number of milliseconds, so stores in other languages
 * (Lua doubles) compute bit-for-bit the same decisions. The emission interval `T` is
 * `ceil(periodMs / limit)`: exact for the built-in plans (3 600 000 / 100 = 36 000 ms,
 * / 1 000 = 3 600 ms) and otherwise rounded *up*, so rounding never admits more than the rule
 * (a fractional `T` would drift in floating point instead). The cost of rounding up is at most
 * `limit − 1` ms longer to refill fully (e.g. 7 000/h: `T` = 515 ms, full refill 3 605 s).
 */
import type { RateLimitDecision, RateLimitRule } from '../ports/rate-limit.js';

/** What {@link gcra} decided, and what the store must keep for the key. */
export interface GcraResult {
  decision: RateLimitDecision;
  /**
   * The new theoretical arrival time (ms since the epoch) to store, with a TTL of
   * `decision.resetMs`; `null` when refused: the store keeps its state unchanged.
   */
  tat: number | null;
}

/**
 * The emission interval `T` of a rule in whole milliseconds: `ceil(periodMs / limit)`, the time
 * one request's worth of quota takes to come back. Throws `RangeError` for an invalid rule.
 */
export function emissionIntervalMs(rule: RateLimitRule): number {
  assertRule(rule);
  return Math.ceil(rule.periodMs / rule.limit);
}

/**
 * Decides one request at `nowMs` (integer ms since the epoch) against `rule`, given the key's
 * stored TAT (`null` when the key has none or it expired). With `T` = {@link emissionIntervalMs}
 * and burst tolerance `τ = (limit − 1)·T`, a request is admitted when `max(tat, now) − now ≤ τ`,
 * and then the TAT becomes `max(tat, now) + T`. In the decision (all durations ms):
 * - `remaining`: requests still admitted at `nowMs` after this one, `floor((limit·T − d) / T)`
 *   with `d` = new TAT − now; 0 when refused.
 * - `resetMs`: time until the full `limit` is available again, `TAT − now` (≥ 0).
 * - `retryAfterMs`: 0 when admitted; otherwise `TAT − τ − now`, when the next one would be.
 *
 * Throws `RangeError` when `rule` is not integers with `1 ≤ limit ≤ periodMs`, or when `nowMs` or
 * `state` is not a safe integer.
 */
export function gcra(state: number | null, rule: RateLimitRule, nowMs: number): GcraResult {
  const interval = emissionIntervalMs(rule);
  if (!Number.isSafeInteger(nowMs)) throw new RangeError(`nowMs must be an integer number of ms, got ${nowMs}`);
  if (state !== null && !Number.isSafeInteger(state))
    throw new RangeError(`A stored TAT must be an integer, got ${state}`);
  const { limit } = rule;
  const tolerance = (limit - 1) * interval;
  // A TAT in the past means "no debt": quota is full, which is exactly what a missing key means.
  const start = state === null ? nowMs : Math.max(state, nowMs);

  if (start - nowMs > tolerance) {
    return {
      decision: {
        allowed: false,
        limit,
        remaining: 0,
        resetMs: start - nowMs,
        retryAfterMs: start - tolerance - nowMs,
      },
      tat: null,
    };
  }
  const tat = start + interval;
  const debt = tat - nowMs;
  return {
    decision: {
      allowed: true,
      limit,
      remaining: Math.floor((limit * interval - debt) / interval),
      resetMs: debt,
      retryAfterMs: 0,
    },
    tat,
  };
}

/** Throws `RangeError` unless `limit` and `periodMs` are integers with `1 ≤ limit ≤ periodMs`. */
function assertRule(rule: RateLimitRule): void {
  const { limit, periodMs } = rule;
  // limit ≤ periodMs keeps T ≥ 1 ms: below that, whole-ms time cannot tell requests apart.
  if (!Number.isSafeInteger(limit) || !Number.isSafeInteger(periodMs) || limit < 1 || limit > periodMs) {
    throw new RangeError(
      `A rate-limit rule needs integers 1 ≤ limit ≤ periodMs, got limit ${limit}, periodMs ${periodMs}`,
    );
  }
}
