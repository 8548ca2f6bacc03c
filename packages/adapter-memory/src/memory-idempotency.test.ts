/** @module MemoryIdempotencyStore against the idempotency store contract, plus its sweeping. */
import { runIdempotencyStoreContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE, MemoryIdempotencyStore } from './memory-idempotency.js';

runIdempotencyStoreContract({ describe, it, expect }, () => ({ store: new MemoryIdempotencyStore() }));

const WS = { workspaceId: 'ws' };

describe('MemoryIdempotencyStore', () => {
  it('sweeps expired claims and responses, keeping live ones', async () => {
    const store = new MemoryIdempotencyStore();
    await store.claim(WS, { key: 'a', fingerprint: 'fp', leaseMs: 1 });
    await store.claim(WS, { key: 'b', fingerprint: 'fp', leaseMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    store.sweep();
    expect(store.size).toBe(1);
    expect(await store.claim(WS, { key: 'b', fingerprint: 'fp', leaseMs: 60_000 })).toEqual({
      outcome: 'in_progress',
    });
  });
});

describe('MemoryIdempotencyStore bounds', () => {
  const kept = { status: 400, contentType: 'application/json', body: '{}' };

  it('holds at most maxKeysPerWorkspace keys per workspace, dropping the oldest claimed first', async () => {
    const store = new MemoryIdempotencyStore({ maxKeysPerWorkspace: 3 });
    for (const key of ['k1', 'k2', 'k3', 'k4', 'k5']) {
      const claim = await store.claim(WS, { key, fingerprint: 'fp', leaseMs: 60_000 });
      if (claim.outcome !== 'claimed') throw new Error(`expected a claim, got ${claim.outcome}`);
      expect(await store.complete(WS, { key, token: claim.token, response: kept, ttlMs: 86_400_000 })).toBe(true);
    }
    expect(store.size).toBe(3);
    // k1 and k2 were dropped: claimable anew; k3–k5 still replay.
    expect((await store.claim(WS, { key: 'k1', fingerprint: 'fp', leaseMs: 60_000 })).outcome).toBe('claimed');
    expect((await store.claim(WS, { key: 'k5', fingerprint: 'fp', leaseMs: 60_000 })).outcome).toBe('replay');
    expect(store.size).toBe(3);
  });

  it("one workspace's distinct keys never push out another's", async () => {
    const store = new MemoryIdempotencyStore({ maxKeysPerWorkspace: 2 });
    await store.claim({ workspaceId: 'victim' }, { key: 'mine', fingerprint: 'fp', leaseMs: 60_000 });
    for (let n = 0; n < 100; n += 1)
      await store.claim({ workspaceId: 'attacker' }, { key: `key-${n}`, fingerprint: 'fp', leaseMs: 60_000 });
    expect(store.size).toBe(3);
    expect(await store.claim({ workspaceId: 'victim' }, { key: 'mine', fingerprint: 'fp', leaseMs: 60_000 })).toEqual({
      outcome: 'in_progress',
    });
  });

  it('holds at most MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE keys by default', async () => {
    const store = new MemoryIdempotencyStore();
    for (let n = 0; n < MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE + 500; n += 1) {
      await store.claim(WS, { key: `key-${n}`, fingerprint: 'fp', leaseMs: 60_000 });
    }
    expect(store.size).toBe(MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new MemoryIdempotencyStore({ maxKeysPerWorkspace: 0 })).toThrow(RangeError);
  });
});
