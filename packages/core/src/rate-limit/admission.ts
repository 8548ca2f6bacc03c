/**
 * @module A request's rate-limit decision, left for the storage call it guards to make in the
 * same atomic step (docs/rate-limits.md#one-round-trip).
 */
import type { RateLimitDecision } from '../ports/rate-limit.js';
import type { Principal } from '../types.js';
import { rateLimitRefusal, rateLimitResult, type RateLimitHit, type RateLimitResult } from './result.js';

/** How an {@link Admission} asks its limiter (a `RateLimiter`) when no storage call took its hit. */
export interface AdmissionLimiter {
  /** The hit of one request of `principal` now. */
  hitOf(principal: Principal): RateLimitHit;
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
 * The rate-limit decision of one request, not made yet. It travels in the request's `Scope`
 * (ports/scope.ts); the core's storage calls decide it before they act (rate-limit/admit-first.ts).
 * A storage call that counts the hit in its own atomic step (one Lua script on Redis, whose
 * rate-limit state lives in the workspace's slot) {@link take}s it, decides it before doing
 * anything, and reports the decision with {@link decide} — a refused call does nothing at all and
 * throws. Any other call first awaits {@link admit}, which asks the rate-limit store once. After
 * the request, {@link result} is its decision, however it was made — asked now when no call made
 * it (the request failed before its first storage call, or made none). Either way the request is
 * counted exactly once. See docs/rate-limits.md#one-round-trip.
 */
export class Admission {
  #state: 'pending' | 'taken' | 'decided' | 'failed' | 'asked' = 'pending';
  #decision: RateLimitDecision | undefined;
  #asked: Promise<RateLimitResult> | undefined;
  #admitted = false;
  #failure: unknown;
  /** Resolves when the call that took the hit reports; calls made meanwhile wait for it. */
  #reported: Promise<void> | undefined;
  #report: (() => void) | undefined;
  readonly #about: Pick<RateLimitResult, 'plan' | 'periodMs'>;

  /** The hit of `principal`'s request now, on `limiter` (a `RateLimiter`). Throws like `RateLimiter.check` for a key without a valid rule; asks nothing. */
  readonly hit: RateLimitHit;

  constructor(
    private readonly limiter: AdmissionLimiter,
    principal: Principal,
  ) {
    this.hit = limiter.hitOf(principal);
    this.#about = { plan: principal.plan, periodMs: this.hit.rule.periodMs };
  }

  /** True while nothing took or decided the hit: a call that decides it in its own step may {@link take} it. */
  get pending(): boolean {
    return this.#state === 'pending';
  }

  /** True once the request is known to be admitted: calls need not wait for anything. */
  get admitted(): boolean {
    return this.#admitted;
  }

  /** True when a storage call made the decision in its own step (its response already reflects a refusal). */
  get decidedInStorage(): boolean {
    return this.#state === 'decided';
  }

  /**
   * The hit, for the one storage call that decides it in its own atomic step; `undefined` once
   * something took or decided it. The taker must then report with {@link decide} or {@link fail}.
   */
  take(): RateLimitHit | undefined {
    if (this.#state !== 'pending') return undefined;
    this.#state = 'taken';
    this.#reported = new Promise((resolve) => (this.#report = resolve));
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
    this.#admitted = decision.allowed;
    this.#report?.();
    if (!decision.allowed) throw rateLimitRefusal(rateLimitResult(decision, this.#about));
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
    this.#admitted = this.failOpen;
    this.#report?.();
  }

  /**
   * Resolves once the request is admitted, asking the rate-limit store when no call decided it
   * yet (once, however many calls wait).
   * @throws ParleyError `rate_limit_exceeded` when it is refused (by the store, or by the `'closed'` failure policy)
   */
  async admit(): Promise<void> {
    if (this.#state === 'taken') await this.#reported;
    const result = await this.result();
    if (!result.allowed) throw rateLimitRefusal(result);
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
        return (this.#asked ??= this.limiter.decide(this.hit, this.#about).then((result) => {
          this.#admitted = result.allowed;
          return result;
        }));
    }
  }
}
