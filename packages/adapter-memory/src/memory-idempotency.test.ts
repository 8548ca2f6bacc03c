/** @module MemoryIdempotencyStore against the idempotency store contract, plus its sweeping. */
import { runIdempotencyStoreContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from './memory-idempotency.js';

runIdempotencyStoreContract({ describe, it, expect }, () => ({ store: new MemoryIdempotencyStore() }));

describe('MemoryIdempotencyStore', () => {
  it('sweeps expired claims and responses, keeping live ones', async () => {
    const store = new MemoryIdempotencyStore();
    await store.claim('ws', 'a', 'fp', 1);
    await store.claim('ws', 'b', 'fp', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
    store.sweep();
    expect(store.size).toBe(1);
    expect(await store.claim('ws', 'b', 'fp', 60_000)).toEqual({ outcome: 'in_progress' });
  });
});
