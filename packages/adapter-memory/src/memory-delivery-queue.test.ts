/** @module MemoryDeliveryQueue against the delivery queue contract, plus what only memory does. */
import { contractJob, runDeliveryQueueContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryDeliveryQueue } from './memory-delivery-queue.js';

// In memory the backend is the queue object itself: workers sharing it hold the same instance,
// so the "several instances" group checks several callers of one queue (no test opts out: CI
// counts a skipped test as a failure).
runDeliveryQueueContract({ describe, it, expect }, ({ leaseMs }) => {
  const queue = new MemoryDeliveryQueue({ leaseMs });
  return { queue, peer: () => queue, cleanup: () => queue.close() };
});

describe('MemoryDeliveryQueue', () => {
  it('refuses a lease that is not a positive integer', () => {
    expect(() => new MemoryDeliveryQueue({ leaseMs: 0 })).toThrow(RangeError);
    expect(() => new MemoryDeliveryQueue({ leaseMs: 2.5 })).toThrow(RangeError);
  });

  it('close() ends waiting leases with [] and later ones wait no more; jobs stay', async () => {
    const queue = new MemoryDeliveryQueue();
    const waiting = queue.lease('first', 1, 60_000);
    await queue.close();
    expect(await waiting).toEqual([]);
    await queue.enqueue([contractJob(1)]);
    expect(await queue.lease('retry', 1, 60_000)).toEqual([]);
    expect((await queue.lease('first', 1, 60_000)).length).toBe(1);
  });

  it('keeps due order among 500 retries scheduled in shuffled order', async () => {
    const queue = new MemoryDeliveryQueue();
    const jobs = Array.from({ length: 500 }, (_, i) => contractJob(i));
    await queue.enqueue(jobs);
    const leased = await queue.lease('first', 500, 0);
    const now = Date.now();
    const dues = leased.map((_, i) => now + 200 + ((i * 7_919) % 500)); // a permutation of 500 due times
    await Promise.all(leased.map((item, i) => queue.retry(item, { ...item.job, attempt: 2 }, dues[i]!)));
    await new Promise((resolve) => setTimeout(resolve, now + 750 - Date.now()));
    const due = await queue.lease('retry', 500, 0);
    const expected = leased.map((item, i) => ({ id: item.job.id, due: dues[i]! })).sort((a, b) => a.due - b.due);
    expect(due.map((item) => item.job.id)).toEqual(expected.map((item) => item.id));
    await queue.close();
  });
});
