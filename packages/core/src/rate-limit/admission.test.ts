/** @module Tests of Admission: a rate-limit decision made once, by a storage call or by the store. */
import { describe, expect, it, vi } from 'vitest';
import { ParleyError } from '../errors.js';
import type { RateLimitDecision, RateLimitRule, RateLimitStore } from '../ports/rate-limit.js';
import { ManualClock } from '../testing/clock.js';
import type { Principal } from '../types.js';
import { Admission } from './admission.js';
import { gcra } from './gcra.js';
import { RateLimiter } from './rate-limiter.js';

const principal: Principal = { keyId: 'key_1', workspaceId: 'ws1', plan: 'enterprise', scopes: ['*'], limitPerHour: 2 };
const RULE: RateLimitRule = { limit: 2, periodMs: 3_600_000 };

/** A GCRA store in a Map, counting its hits. */
function countingStore() {
  const tats = new Map<string, number>();
  let hits = 0;
  const store: RateLimitStore = {
    hit: async (key, rule, nowMs) => {
      hits += 1;
      const { decision, tat } = gcra(tats.get(key) ?? null, rule, nowMs);
      if (tat !== null) tats.set(key, tat);
      return decision;
    },
  };
  return { store, hits: () => hits, tats };
}

function limiter(store: RateLimitStore, options: ConstructorParameters<typeof RateLimiter>[2] = {}) {
  return new RateLimiter(store, new ManualClock(1_000_000), options);
}

describe('Admission', () => {
  it('carries the hit of the principal now, and hands it to one taker only', () => {
    const admission = new Admission(limiter(countingStore().store), principal);
    expect(admission.hit).toEqual({ key: 'ws1', rule: RULE, nowMs: 1_000_000 });
    expect(admission.pending).toBe(true);
    expect(admission.take()).toEqual(admission.hit);
    expect(admission.pending).toBe(false);
    expect(admission.take()).toBeUndefined();
  });

  it("a taker's admitted decision is the result, made in storage; the store is not asked", async () => {
    const { store, hits } = countingStore();
    const admission = new Admission(limiter(store), principal);
    const decision: RateLimitDecision = { allowed: true, limit: 2, remaining: 1, resetMs: 1_800_000, retryAfterMs: 0 };
    admission.take();
    admission.decide(decision);
    expect(admission.decidedInStorage).toBe(true);
    expect(admission.admitted).toBe(true);
    expect(await admission.result()).toEqual({ ...decision, plan: 'enterprise', periodMs: 3_600_000 });
    expect(hits()).toBe(0);
  });

  it("a taker's refusal throws rate_limit_exceeded with the seconds to wait", async () => {
    const admission = new Admission(limiter(countingStore().store), principal);
    admission.take();
    let thrown: unknown;
    try {
      admission.decide({ allowed: false, limit: 2, remaining: 0, resetMs: 3_600_000, retryAfterMs: 1_800_001 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ParleyError);
    expect(thrown).toMatchObject({ code: 'rate_limit_exceeded', details: { retryAfterSeconds: 1801 } });
    expect((thrown as Error).message).toBe(
      'Rate limit exceeded: the enterprise plan allows 2 requests per hour. Retry after 1801 s.',
    );
    expect((await admission.result()).allowed).toBe(false);
  });

  it('decide() without take() is a bug and says so', () => {
    const admission = new Admission(limiter(countingStore().store), principal);
    expect(() => admission.decide({ allowed: true, limit: 2, remaining: 1, resetMs: 1, retryAfterMs: 0 })).toThrow(
      /without take/,
    );
  });

  it('nothing took it: result() asks the store once, and that counts like a check', async () => {
    const { store, hits } = countingStore();
    const rateLimiter = limiter(store);
    const admission = new Admission(rateLimiter, principal);
    const [first, again] = await Promise.all([admission.result(), admission.result()]);
    expect(first).toEqual(again);
    expect(first).toMatchObject({ allowed: true, remaining: 1 });
    expect(hits()).toBe(1);
    expect(admission.take()).toBeUndefined();
    expect(await rateLimiter.check(principal)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await new Admission(rateLimiter, principal).result()).toMatchObject({ allowed: false });
  });

  it('the taker failed: the policy decides without asking the store, and a recording failure is reported', async () => {
    const { store, hits } = countingStore();
    const onStoreError = vi.fn();
    const open = new Admission(limiter(store, { onStoreError }), principal);
    expect(open.failOpen).toBe(true);
    open.take();
    open.fail();
    expect(await open.result()).toEqual({
      ...gcra(null, RULE, 1_000_000).decision,
      plan: 'enterprise',
      periodMs: 3_600_000,
      failure: 'open',
    });
    expect(onStoreError).not.toHaveBeenCalled();

    const closed = new Admission(
      limiter(store, { failure: 'closed', closedRetryAfterMs: 5000, onStoreError }),
      principal,
    );
    expect(closed.failOpen).toBe(false);
    closed.take();
    const error = new Error('OOM');
    closed.fail(error);
    expect(await closed.result()).toMatchObject({ allowed: false, retryAfterMs: 5000, failure: 'closed' });
    expect(onStoreError).toHaveBeenCalledWith(error, { key: 'ws1', policy: 'closed' });
    expect(hits()).toBe(0);
  });
});
