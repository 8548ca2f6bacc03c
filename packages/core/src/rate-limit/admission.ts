/**
 * @module A request's rate-limit decision, left for the storage call it guards to make in the
 * same atomic step (docs/rate-limits.md#one-round-trip).
 */
import { ErrorCode, ParleyError } from '../errors.js';
import type { RateLimitDecision, RateLimitRule, RateLimitStore } from '../ports/rate-limit.js';
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
 * class of its own, which costs about 1 µs and slows every later reader of it
 * (bench/PERFORMANCE-NOTES.md, "Node 20's object spread").
 */
export function rateLimitResult(
  decision: RateLimitDecision,
  about: Pick<RateLimitResult, 'plan' | 'periodMs'>,
  failure?: RateLimitResult['failure'],
): RateLimitResult {
  const { allowed, limit, remaining, resetMs, retryAfterMs } = decision;
  const result: RateLimitResult = { allowed, limit, remaining, resetMs, retryAfterMs, plan: about.plan, periodMs: about.periodMs };
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

/** How an {@link Admission} asks its limiter when no storage call took its hit. */
export interface AdmissionLimiter {
  /** The failure policy: what to decide when the store fails. */
  readonly failure: 'open' | 'closed';
  /** The decision from the store now, under the limiter's deadline and failure policy. */
  decide(hit: RateLimitHit, about: Pick<RateLimitResult, 'plan' | 'periodMs'>): Promise<RateLimitResult>;
  /**
   * The failure policy's answer, without asking the store (the call that took the hit failed);
   * reports `error`, when given, as a store failure.
   */
  failed(hit: RateLimitHit, about: Pick<RateLimitResult, 'plan' | 'periodMs'>, error?: unknown): RateLimitResult;
}

/**
 * The rate-limit decision of one request, not made yet: a storage call that can count the hit in
 * its own atomic step (one Lua script on Redis, whose rate-limit state lives in the workspace's
 * slot) {@link take}s it, decides it before doing anything, and reports the decision with
 * {@link decide} — a refused call does nothing at all and throws. When no call took it (the request
 * failed before reaching storage, or its route passes no admission), {@link result} asks the
 * rate-limit store on its own, as an up-front check would have. Either way the request is counted
 * exactly once. Made by `RateLimiter.admission`; see docs/rate-limits.md#one-round-trip.
 */
export class Admission {
  #state: 'pending' | 'taken' | 'decided' | 'failed' | 'asked' = 'pending';
  #decision: RateLimitDecision | undefined;
  #asked: Promise<RateLimitResult> | undefined;
  #failure: unknown;
  readonly #about: Pick<RateLimitResult, 'plan' | 'periodMs'>;
  /**
   * Called once with the decision when a storage call makes it — before that call resolves or
   * throws, so a route's response can be built with the decision's header fields in place.
   */
  onDecided: ((result: RateLimitResult) => void) | undefined;

  constructor(
    /** The store whose state the hit counts against. */
    readonly store: RateLimitStore,
    readonly hit: RateLimitHit,
    plan: Plan,
    private readonly limiter: AdmissionLimiter,
  ) {
    this.#about = { plan, periodMs: hit.rule.periodMs };
  }

  /** True while nothing took or decided the hit. */
  get pending(): boolean {
    return this.#state === 'pending';
  }

  /**
   * The hit, for the one storage call that decides it in its own atomic step, on the state of
   * {@link store}; `undefined` once something took or decided it. The taker must then report with
   * {@link decide} or {@link fail}.
   */
  take(): RateLimitHit | undefined {
    if (this.#state !== 'pending') return undefined;
    this.#state = 'taken';
    return this.hit;
  }

  /**
   * The decision of the call that took the hit.
   * @throws ParleyError `rate_limit_exceeded` when it was refused (the call did nothing).
   */
  decide(decision: RateLimitDecision): void {
    if (this.#state !== 'taken') throw new Error(`Admission.decide() without take() (state ${this.#state})`);
    this.#state = 'decided';
    this.#decision = decision;
    const result = rateLimitResult(decision, this.#about);
    this.onDecided?.(result);
    if (!decision.allowed) throw rateLimitRefusal(result);
  }

  /** True when a storage call that cannot record the decision should run anyway (the policy is `'open'`). */
  get failOpen(): boolean {
    return this.limiter.failure === 'open';
  }

  /**
   * The call that took the hit failed before its decision was known (`error` unset: the call
   * itself failed), or (`error`) it could not record it: the failure policy decides, and `error`
   * is reported as a rate-limit store failure.
   */
  fail(error?: unknown): void {
    if (this.#state !== 'taken') return;
    this.#state = 'failed';
    this.#failure = error;
  }

  /**
   * The request's decision: the one a storage call made, the failure policy's when that call
   * failed, or — when no call took the hit — the rate-limit store's, asked now (once). Never rejects.
   */
  result(): Promise<RateLimitResult> {
    switch (this.#state) {
      case 'decided':
        return Promise.resolve(rateLimitResult(this.#decision!, this.#about));
      case 'failed':
      case 'taken':
        return Promise.resolve(this.limiter.failed(this.hit, this.#about, this.#failure));
      default:
        this.#state = 'asked';
        return (this.#asked ??= this.limiter.decide(this.hit, this.#about));
    }
  }
}
