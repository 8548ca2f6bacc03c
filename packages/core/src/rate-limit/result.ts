/** @module One rate-limit decision as the API reports it: the hit counted, the result and its refusal. */
import { ErrorCode, ParleyError } from '../errors.js';
import type { RateLimitDecision, RateLimitRule } from '../ports/rate-limit.js';
import type { Plan } from '../types.js';

/** One request to count: `key` (the workspace id) against `rule` at `nowMs` (ms since the epoch). */
export interface RateLimitHit {
  key: string;
  rule: RateLimitRule;
  nowMs: number;
}

/**
 * A {@link RateLimitDecision} with what the `RateLimit-Policy` header needs: the principal's `plan` and
 * the rule's `periodMs`. `failure` is set when the store failed and that policy decided; the
 * numbers are then the policy's: `'open'` reports a fresh workspace (`remaining` = `limit − 1`),
 * `'closed'` a refusal with `retryAfterMs` = `resetMs` = `closedRetryAfterMs`.
 */
export interface RateLimitResult extends RateLimitDecision {
  plan: Plan;
  periodMs: number;
  failure?: 'open' | 'closed';
}

/**
 * `decision` with the policy fields `about` (and `failure`, when given) as one {@link RateLimitResult}.
 * Written as one object literal because it runs on every request: on Node 20, V8 gives every
 * object built by a spread followed by more properties (`{ ...decision, ...about }`) a hidden
 * class of its own, which slows its construction and every later reader of it
 * (bench/PERFORMANCE-NOTES.md, "Node 20's object spread").
 */
export function rateLimitResult(
  decision: RateLimitDecision,
  about: Pick<RateLimitResult, 'plan' | 'periodMs'>,
  failure?: RateLimitResult['failure'],
): RateLimitResult {
  const { allowed, limit, remaining, resetMs, retryAfterMs } = decision;
  const result: RateLimitResult = {
    allowed,
    limit,
    remaining,
    resetMs,
    retryAfterMs,
    plan: about.plan,
    periodMs: about.periodMs,
  };
  if (failure !== undefined) result.failure = failure;
  return result;
}

/** The ParleyError `rate_limit_exceeded` (429) of a refused `result`, with `details.retryAfterSeconds`. */
export function rateLimitRefusal(result: RateLimitResult): ParleyError {
  const retryAfterSeconds = Math.ceil(result.retryAfterMs / 1000);
  const window = result.periodMs === 3_600_000 ? 'hour' : `${Math.ceil(result.periodMs / 1000)} seconds`;
  return new ParleyError(
    ErrorCode.rateLimitExceeded,
    `Rate limit exceeded: the ${result.plan} plan allows ${result.limit} requests per ${window}. Retry after ${retryAfterSeconds} s.`,
    { retryAfterSeconds },
  );
}
