/** @module MemoryRateLimitStore against the rate-limit store contract, plus its sweeping. */
import { runRateLimitStoreContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from './memory-rate-limit.js';

runRateLimitStoreContract({ describe, it, expect }, () => new MemoryRateLimitStore());

describe('MemoryRateLimitStore', () => {
  const rule = { limit: 2, periodMs: 1000 };

  it('sweeps keys whose quota is full again, keeping the ones still in debt', async () => {
    const store = new MemoryRateLimitStore({ sweepEvery: 3 });
    await store.hit('a', rule, 0); // TAT 500
    await store.hit('b', rule, 400); // TAT 900
    expect(store.size).toBe(2);
    await store.hit('c', rule, 600); // third hit sweeps at 600: 'a' is due, 'b' is not
    expect(store.size).toBe(2);
    store.sweep(900);
    expect(store.size).toBe(1);
    // A swept key behaves as a new one.
    expect(await store.hit('a', rule, 900)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetMs: 500,
      retryAfterMs: 0,
    });
  });

  it('rejects a sweep interval that is not a positive integer', () => {
    expect(() => new MemoryRateLimitStore({ sweepEvery: 0 })).toThrow(RangeError);
  });
});
