/** @module MemoryReplyQueue against the reply queue contract. */
import { contractReplyJob, runReplyQueueContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryReplyQueue } from './memory-reply-queue.js';

// One process holds one queue: there is no second instance over the same jobs.
runReplyQueueContract(
  { describe, it, expect },
  ({ leaseMs }) => {
    const queue = new MemoryReplyQueue({ leaseMs });
    return { queue, cleanup: () => queue.close() };
  },
  { skip: ['reply queue instances'] },
);

describe('MemoryReplyQueue', () => {
  it('close() ends a waiting lease with null; jobs stay', async () => {
    const queue = new MemoryReplyQueue();
    const waiting = queue.lease(60_000);
    await queue.close();
    expect(await waiting).toBeNull();
    await queue.enqueue(contractReplyJob('conv_x'));
    expect(await queue.size()).toBe(1);
  });
});
