/** @module MemoryReplyQueue against the reply queue contract. */
import { contractReplyJob, runReplyQueueContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryReplyQueue } from './memory-reply-queue.js';

// One process holds one queue: its "other instance" is itself (CI counts skipped tests as failures).
runReplyQueueContract({ describe, it, expect }, ({ leaseMs }) => {
  const queue = new MemoryReplyQueue({ leaseMs });
  return { queue, peer: () => queue, cleanup: () => queue.close() };
});

describe('MemoryReplyQueue', () => {
  it('close() ends a waiting lease with null; jobs stay', async () => {
    const queue = new MemoryReplyQueue();
    const waiting = queue.lease(60_000, { models: [] });
    await queue.close();
    expect(await waiting).toBeNull();
    await queue.enqueue(contractReplyJob('conv_x'));
    expect(await queue.size()).toBe(1);
  });
});
