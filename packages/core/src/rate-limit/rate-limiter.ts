/** @module Per-workspace plan rate limits over a store, with a fault policy for when it fails. */
import { inject, injectable } from '../di.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimitStore } from '../ports/rate-limit.js';
import { TOKENS } from '../tokens.js';
import type { Principal } from '../types.js';
import { rateLimitResult, type RateLimitHit, type RateLimitResult } from './result.js';
import { gcra } from './gcra.js';
import type { RateLimiterOptions, RateLimitFailurePolicy } from './options.js';
import { planRules, ruleFor, type PlanRules } from './plans.js';

/**
 * The plan rate limit of each workspace (docs/rate-limits.md): the quota is the workspace's,
 * so every key of a workspace draws on one quota, keyed by the workspace id. Decisions are
 * GCRA's (see `gcra.ts`), made atomically by the store. The constructor throws `RangeError` for
 * an invalid plan table, policy, `timeoutMs` or `closedRetryAfterMs`.
 */
@injectable()
export class RateLimiter {
  private readonly plans: PlanRules;
  /** The failure policy (see {@link RateLimiterOptions.failure}). */
  readonly failure: RateLimitFailurePolicy;
  private readonly deadlines: Deadlines;
  private readonly closedRetryAfterMs: number;
  private readonly onStoreError: NonNullable<RateLimiterOptions['onStoreError']>;
  /** See {@link folds}. */
  private readonly decidedInStorage: boolean;

  constructor(
    @inject(TOKENS.rateLimits) private readonly store: RateLimitStore,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.rateLimiterOptions) options: RateLimiterOptions = {},
  ) {
    this.plans = planRules(options.plans);
    this.failure = options.failure ?? 'open';
    if (this.failure !== 'open' && this.failure !== 'closed')
      throw new RangeError(`Unknown rate-limit failure policy '${String(this.failure)}'`);
    this.deadlines = new Deadlines(positive(options.timeoutMs ?? 250, 'timeoutMs'));
    this.closedRetryAfterMs = positive(options.closedRetryAfterMs ?? 1000, 'closedRetryAfterMs');
    this.decidedInStorage = options.decidedInStorage === true;
    this.onStoreError =
      options.onStoreError ??
      ((error, { key, policy }) =>
        console.warn(`[parley] rate-limit store failed for '${key}', failing ${policy}:`, error));
  }

  /**
   * Counts one request of `principal`'s workspace now. Resolves within `timeoutMs` plus the
   * store's own overhead, and never rejects because of the store; it throws (before asking the
   * store) only for a key without a valid rule: see `ruleFor`.
   */
  async check(principal: Principal): Promise<RateLimitResult> {
    const hit = this.hitOf(principal);
    // `return await`: a promise returned from an async function takes two more turns to settle.
    return await this.decide(hit, { plan: principal.plan, periodMs: hit.rule.periodMs });
  }

  /**
   * True when the store's decisions can be made inside storage calls (`decidedInStorage`, e.g.
   * Redis): then leaving a request's decision to its first storage call saves it a round trip
   * (docs/rate-limits.md#one-round-trip).
   */
  get folds(): boolean {
    return this.decidedInStorage;
  }

  /** The store's decision on `hit` under the deadline, else the failure policy's; never rejects. */
  async decide(hit: RateLimitHit, about: Pick<RateLimitResult, 'plan' | 'periodMs'>): Promise<RateLimitResult> {
    try {
      const answer = this.store.hit(hit.key, hit.rule, hit.nowMs);
      const decision = await (this.store.inProcess === true ? answer : this.deadlines.race(answer));
      return rateLimitResult(decision, about);
    } catch (error) {
      return this.failed(hit, about, error);
    }
  }

  /** The failure policy's answer for `hit`, asking nothing; `error` goes to `onStoreError`. */
  failed(hit: RateLimitHit, about: Pick<RateLimitResult, 'plan' | 'periodMs'>, error?: unknown): RateLimitResult {
    if (error !== undefined) {
      try {
        this.onStoreError(error, { key: hit.key, policy: this.failure });
      } catch {
        // A broken logger must not turn a degraded answer into a failed request.
      }
    }
    if (this.failure === 'open') return rateLimitResult(gcra(null, hit.rule, hit.nowMs).decision, about, 'open');
    const wait = this.closedRetryAfterMs;
    return rateLimitResult(
      { allowed: false, limit: hit.rule.limit, remaining: 0, resetMs: wait, retryAfterMs: wait },
      about,
      'closed',
    );
  }

  /**
   * One request of `principal`'s workspace now, to count: its key, rule and time.
   * @throws like {@link check} for a key without a valid rule
   */
  hitOf(principal: Principal): RateLimitHit {
    return { key: principal.workspaceId, rule: ruleFor(principal, this.plans), nowMs: this.clock.now() };
  }
}

/**
 * The deadlines of pending store calls. They are all `ms` long, so they expire in the order they
 * were set: one timer, armed for the oldest pending deadline, serves every request in flight —
 * instead of a timer and a `Promise.race` per request, which cost more than a memory store's
 * answer. Pending calls are kept in a `Set`, which iterates in insertion order (oldest deadline
 * first); an answer removes its call at once, so nothing outlives its request.
 */
class Deadlines {
  private readonly pending = new Set<{ at: number; reject: (error: Error) => void }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  /** `promise`'s outcome, or a rejection with a timeout `Error` once `ms` milliseconds have passed. */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call = { at: performance.now() + this.ms, reject };
      this.pending.add(call);
      this.timer ??= this.arm(this.ms);
      // A store that answers after the deadline settles an already-rejected promise: a no-op.
      promise.then(
        (value) => {
          this.pending.delete(call);
          resolve(value);
        },
        (error: unknown) => {
          this.pending.delete(call);
          reject(error);
        },
      );
    });
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.expire(), ms);
    // The deadline alone must not keep a process alive.
    timer.unref?.();
    return timer;
  }

  private expire(): void {
    const now = performance.now();
    this.timer = undefined;
    for (const call of this.pending) {
      if (call.at > now) {
        this.timer = this.arm(call.at - now);
        return;
      }
      this.pending.delete(call);
      call.reject(new Error(`Rate-limit store did not answer within ${this.ms} ms`));
    }
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number of ms, got ${value}`);
  return value;
}
