/** @module Tests of RateLimiter: per-workspace quota, fail-open/closed, timeout and recovery. */
import { memoryAdapters } from '@parley/adapter-memory';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCore } from '../create-core.js';
import type { RateLimitDecision, RateLimitRule, RateLimitStore } from '../ports/rate-limit.js';
import { ManualClock } from '../testing/clock.js';
import type { Principal } from '../types.js';
import type { RateLimitStoreFailure } from './options.js';
import { RateLimiter } from './rate-limiter.js';

const principal = (workspaceId: string, plan: Principal['plan'] = 'free', limitPerHour?: number): Principal => ({
  keyId: `key_${workspaceId}`,
  workspaceId,
  plan,
  scopes: ['*'],
  ...(limitPerHour === undefined ? {} : { limitPerHour }),
});

/** A store that records its calls and answers as `answer` says. */
function scriptedStore(answer: (call: number) => Promise<RateLimitDecision>) {
  const calls: Array<[string, RateLimitRule, number]> = [];
  const store: RateLimitStore = { hit: (key, rule, nowMs) => answer(calls.push([key, rule, nowMs])) };
  return { store, calls };
}
const ok: RateLimitDecision = { allowed: true, limit: 100, remaining: 42, resetMs: 2_088_000, retryAfterMs: 0 };
const hang = () => new Promise<RateLimitDecision>(() => undefined);

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('RateLimiter', () => {
  it("hits the store with the workspace id, the plan's rule and the clock's time", async () => {
    const clock = new ManualClock(1_000_000);
    const { store, calls } = scriptedStore(async () => ok);
    const limiter = new RateLimiter(store, clock);
    expect(await limiter.check(principal('ws1', 'pro'))).toEqual({ ...ok, plan: 'pro', periodMs: 3_600_000 });
    await limiter.check(principal('ws2', 'enterprise', 7000));
    expect(calls).toEqual([
      ['ws1', { limit: 1000, periodMs: 3_600_000 }, 1_000_000],
      ['ws2', { limit: 7000, periodMs: 3_600_000 }, 1_000_000],
    ]);
  });

  it('shares one quota between the keys of a workspace, not between workspaces', async () => {
    const clock = new ManualClock();
    const limiter = createCore(memoryAdapters(), { clock }).rateLimiter!;
    const other = { ...principal('ws1'), keyId: 'key_second' };
    for (let i = 0; i < 50; i++) await limiter.check(principal('ws1'));
    for (let i = 0; i < 50; i++) await limiter.check(other);
    expect(await limiter.check(principal('ws1'))).toMatchObject({ allowed: false, retryAfterMs: 36_000, plan: 'free' });
    expect(await limiter.check(principal('ws2'))).toMatchObject({ allowed: true, remaining: 99 });
    clock.advance(36_000);
    expect(await limiter.check(other)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('fails open on a rejecting store: admits as for a fresh workspace, and reports it', async () => {
    const failures: Array<[unknown, RateLimitStoreFailure]> = [];
    const boom = new Error('ECONNREFUSED');
    const { store } = scriptedStore(() => Promise.reject(boom));
    const limiter = new RateLimiter(store, new ManualClock(), {
      onStoreError: (error, failure) => failures.push([error, failure]),
    });
    const fresh = { allowed: true, limit: 100, remaining: 99, resetMs: 36_000, retryAfterMs: 0 };
    expect(await limiter.check(principal('ws1'))).toEqual({
      ...fresh,
      plan: 'free',
      periodMs: 3_600_000,
      failure: 'open',
    });
    expect(failures).toEqual([[boom, { key: 'ws1', policy: 'open' }]]);
  });

  it('fails closed when configured: refuses, asking to retry after closedRetryAfterMs', async () => {
    const { store } = scriptedStore(() => Promise.reject(new Error('down')));
    const limiter = new RateLimiter(store, new ManualClock(), {
      failure: 'closed',
      closedRetryAfterMs: 2_000,
      onStoreError: () => undefined,
    });
    const refusal = { allowed: false, limit: 1000, remaining: 0, resetMs: 2_000, retryAfterMs: 2_000 };
    expect(await limiter.check(principal('ws1', 'pro'))).toEqual({
      ...refusal,
      plan: 'pro',
      periodMs: 3_600_000,
      failure: 'closed',
    });
  });

  it('decides by the policy after exactly the timeout when the store hangs (default 250 ms)', async () => {
    vi.useFakeTimers();
    const onStoreError = vi.fn();
    const limiter = new RateLimiter(scriptedStore(hang).store, new ManualClock(), { failure: 'closed', onStoreError });
    let result: unknown;
    void limiter.check(principal('ws1')).then((value) => (result = value));
    await vi.advanceTimersByTimeAsync(249);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toMatchObject({ allowed: false, failure: 'closed', retryAfterMs: 1_000 });
    expect(onStoreError).toHaveBeenCalledWith(new Error('Rate-limit store did not answer within 250 ms'), {
      key: 'ws1',
      policy: 'closed',
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds each pending call to its own deadline, one shared timer for all of them', async () => {
    vi.useFakeTimers();
    // Calls 1 and 3 hang, call 2 answers at once: each hanging call is decided 250 ms after it began.
    const { store } = scriptedStore((call) => (call === 2 ? Promise.resolve(ok) : hang()));
    const limiter = new RateLimiter(store, new ManualClock(), { failure: 'closed', onStoreError: () => undefined });
    const results: unknown[] = [];
    void limiter.check(principal('ws1')).then((value) => (results[0] = value));
    await vi.advanceTimersByTimeAsync(100);
    void limiter.check(principal('ws1')).then((value) => (results[1] = value));
    void limiter.check(principal('ws1')).then((value) => (results[2] = value));
    await vi.advanceTimersByTimeAsync(0);
    expect(results[1]).toEqual({ ...ok, plan: 'free', periodMs: 3_600_000 });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(149);
    expect(results[0]).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(results[0]).toMatchObject({ failure: 'closed' });
    expect(results[2]).toBeUndefined();
    await vi.advanceTimersByTimeAsync(99);
    expect(results[2]).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(results[2]).toMatchObject({ failure: 'closed' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('puts no deadline on an in-process store: its answer decides, however late, and no timer is set', async () => {
    vi.useFakeTimers();
    let answer!: (decision: RateLimitDecision) => void;
    const store: RateLimitStore = { inProcess: true, hit: () => new Promise((resolve) => (answer = resolve)) };
    const limiter = new RateLimiter(store, new ManualClock(), { failure: 'closed', onStoreError: () => undefined });
    let result: unknown;
    void limiter.check(principal('ws1')).then((value) => (result = value));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(result).toBeUndefined();
    answer(ok);
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toEqual({ ...ok, plan: 'free', periodMs: 3_600_000 });
  });

  it('recovers on the very next call once the store answers again', async () => {
    // First a refusal to connect, then a hang, then the store is back.
    const answers = [() => Promise.reject(new Error('down')), hang, () => Promise.resolve(ok)];
    const { store, calls } = scriptedStore((call) => answers[Math.min(call, 3) - 1]!());
    const limiter = new RateLimiter(store, new ManualClock(), { timeoutMs: 10, onStoreError: () => undefined });
    expect((await limiter.check(principal('ws1'))).failure).toBe('open');
    expect((await limiter.check(principal('ws1'))).failure).toBe('open');
    expect(await limiter.check(principal('ws1'))).toEqual({ ...ok, plan: 'free', periodMs: 3_600_000 });
    expect(calls.length).toBe(3);
  });

  it('survives a store that throws synchronously and a logger that throws', async () => {
    const store: RateLimitStore = {
      hit: () => {
        throw new TypeError('not connected');
      },
    };
    const limiter = new RateLimiter(store, new ManualClock(), {
      onStoreError: () => {
        throw new Error('logger down');
      },
    });
    expect(await limiter.check(principal('ws1'))).toMatchObject({ allowed: true, failure: 'open' });
  });

  it('warns on the console by default, so an outage is never silent', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const limiter = new RateLimiter(scriptedStore(() => Promise.reject(new Error('down'))).store, new ManualClock());
    await limiter.check(principal('ws9'));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toBe("[parley] rate-limit store failed for 'ws9', failing open:");
  });

  it('throws for a key whose limitPerHour is no valid rule, without blaming the store or asking it', async () => {
    const onStoreError = vi.fn();
    const { store, calls } = scriptedStore(async () => ok);
    for (const failure of ['open', 'closed'] as const) {
      const limiter = new RateLimiter(store, new ManualClock(), { failure, onStoreError });
      await expect(limiter.check(principal('ws1', 'enterprise', 0))).rejects.toThrow(/limitPerHour/);
    }
    expect(onStoreError).not.toHaveBeenCalled();
    expect(calls).toEqual([]);
  });

  it('rejects invalid options and plan tables at construction', () => {
    const { store } = scriptedStore(async () => ok);
    const clock = new ManualClock();
    expect(() => new RateLimiter(store, clock, { failure: 'sideways' as 'open' })).toThrow(RangeError);
    expect(() => new RateLimiter(store, clock, { timeoutMs: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter(store, clock, { plans: { free: { limit: -1, periodMs: 60_000 } } })).toThrow(
      RangeError,
    );
  });
});

describe('createCore and rate limits', () => {
  it('passes plans, failure policy, timeout and error callback to the limiter', async () => {
    const onRateLimitStoreError = vi.fn();
    const core = createCore(
      { ...memoryAdapters(), rateLimits: { hit: () => Promise.reject(new Error('down')) } },
      {
        plans: { free: { limit: 3, periodMs: 60_000 } },
        rateLimitFailure: 'closed',
        rateLimitTimeoutMs: 50,
        onRateLimitStoreError,
      },
    );
    expect(await core.rateLimiter!.check(principal('ws1'))).toMatchObject({
      allowed: false,
      limit: 3,
      periodMs: 60_000,
      failure: 'closed',
    });
    expect(onRateLimitStoreError).toHaveBeenCalledTimes(1);
  });

  it('applies the plan table overrides to a working store', async () => {
    const core = createCore(memoryAdapters(), {
      clock: new ManualClock(),
      plans: { free: { limit: 3, periodMs: 60_000 } },
    });
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push((await core.rateLimiter!.check(principal('ws1'))).allowed);
    expect(decisions).toEqual([true, true, true, false]);
  });
});
