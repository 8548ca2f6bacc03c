/** @module The rate limiter's settings (docs/rate-limits.md), apart from the limiter so the composition root's tokens can name them. */
import type { PlanRules } from './plans.js';

/**
 * What to decide when the store fails or is too slow (docs/rate-limits.md): `'open'` admits the request,
 * `'closed'` refuses it. Either way the next call asks the store again, so service recovers by
 * itself as soon as the store does.
 */
export type RateLimitFailurePolicy = 'open' | 'closed';

/** What {@link RateLimiter.check} reports about a store failure (for logs and metrics). */
export interface RateLimitStoreFailure {
  /** The rate-limit key: the workspace id. */
  key: string;
  /** The policy that decided in the store's place. */
  policy: RateLimitFailurePolicy;
}

/** Options of a {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Overrides of the plan table (default: Free 100/h, Pro 1 000/h; Enterprise per key). */
  plans?: Partial<PlanRules>;
  /** Default `'open'`. */
  failure?: RateLimitFailurePolicy;
  /** How long to wait for the store before the policy decides, in ms. Default 250. Not applied to a store that is `inProcess`. */
  timeoutMs?: number;
  /** How long a `'closed'` refusal asks the client to wait, in ms. Default 1 000. */
  closedRetryAfterMs?: number;
  /**
   * Called with the store's error (or a timeout `Error`) whenever the policy decided. Default:
   * `console.warn`, so an outage is never silent. Errors it throws are ignored.
   */
  onStoreError?: (error: unknown, failure: RateLimitStoreFailure) => void;
  /**
   * True when the storage the requests reach decides this limiter's hits inside its own calls
   * (`Storage.decidesRateLimits`, e.g. Redis); `createCore` sets it from its bundle. Default `false`.
   */
  decidedInStorage?: boolean;
}
