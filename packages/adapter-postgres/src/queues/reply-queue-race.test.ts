/**
 * @module One reply at a time per conversation, proven with several queue instances — each its own
 * pool and LISTEN connection on PostgreSQL — racing to enqueue and to lease, with records of who
 * held which conversation when.
 */
import type { LeasedReply, ReplyJob } from '@parley/core/adapter';
import { expect, it } from 'vitest';
import { onEachBackend, openTestSchema } from '../../test/queues-fixture.js';
import { PostgresReplyQueue } from './postgres-reply-queue.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The model of every job here, and what every lease claims. */
const model = 'm';

await onEachBackend('reply queue races', (backend) => {
  it('six workers on four instances: each conversation served one job at a time, in order, every job once', async () => {
    const schema = await openTestSchema(backend());
    const queues = Array.from(
      { length: 4 },
      () => new PostgresReplyQueue({ ...schema.open(), schema: schema.schema, leaseMs: 10_000, pollMs: 20 }),
    );
    try {
      const conversations = Array.from({ length: 12 }, (_, i) => `conv_${i}`);
      const perConversation = 8;
      let clock = Date.now();
      const jobs = new Map<string, ReplyJob[]>(conversations.map((id) => [id, []]));
      const make = (c: number, n: number): ReplyJob => {
        const conversationId = conversations[c]!;
        const requestedAt = (clock += 1);
        const job: ReplyJob = {
          id: `rpl_${c}_${n}`,
          workspaceId: 'ws_race',
          conversationId,
          inReplyTo: null,
          requestedAt,
          model,
        };
        jobs.get(job.conversationId)!.push(job);
        return job;
      };
      // Half of each conversation's jobs first, conversation after conversation (so the oldest
      // requests all belong to one conversation and every worker wants it), through a different
      // instance each time...
      for (let c = 0; c < conversations.length; c += 1) {
        for (let n = 0; n < perConversation / 2; n += 1) await queues[(c + n) % queues.length]!.enqueue(make(c, n));
      }
      // ...then the other half while the workers run: each conversation's one after another (so
      // their order is known), all conversations at once.
      const enqueuing = conversations.map(async (_, c) => {
        for (let n = perConversation / 2; n < perConversation; n += 1)
          await queues[(c + n) % queues.length]!.enqueue(make(c, n));
      });
      const total = conversations.length * perConversation;
      const held = new Map<string, string>();
      const served: Array<{ conversationId: string; id: string }> = [];
      const overlaps: string[] = [];
      const worker = async (queue: PostgresReplyQueue) => {
        while (served.length < total) {
          const leased: LeasedReply | null = await queue.lease(200, { models: [model] });
          if (!leased) continue;
          const { conversationId, id } = leased.job;
          if (held.has(conversationId)) overlaps.push(`${id} while ${held.get(conversationId)}`);
          held.set(conversationId, id);
          await sleep(Math.random() * 8);
          held.delete(conversationId);
          served.push({ conversationId, id });
          expect(await queue.ack(leased)).toBe(true);
        }
      };
      await Promise.all([...enqueuing, ...Array.from({ length: 6 }, (_, i) => worker(queues[i % queues.length]!))]);
      expect(overlaps).toEqual([]);
      expect(served).toHaveLength(total);
      for (const conversationId of conversations) {
        expect(served.filter((entry) => entry.conversationId === conversationId).map((entry) => entry.id)).toEqual(
          jobs.get(conversationId)!.map((job) => job.id),
        );
      }
      expect(await queues[0]!.size()).toBe(0);
    } finally {
      for (const queue of queues) await queue.close();
      await schema.cleanup();
    }
  }, 60_000);

  it('enqueues racing on one conversation never open a second lease on it', async () => {
    const schema = await openTestSchema(backend());
    const queues = Array.from(
      { length: 4 },
      () => new PostgresReplyQueue({ ...schema.open(), schema: schema.schema, leaseMs: 10_000, pollMs: 20 }),
    );
    try {
      const rounds = 30;
      const leasedTogether: string[] = [];
      for (let round = 0; round < rounds; round += 1) {
        const conversationId = `conv_burst_${round}`;
        const burst = queues.map((queue, i) => {
          const job = {
            id: `rpl_${round}_${i}`,
            workspaceId: 'ws_race',
            conversationId,
            inReplyTo: null,
            requestedAt: Date.now(),
          };
          return queue.enqueue({ ...job, model });
        });
        // Leases race the enqueues: at most one of them may get this conversation.
        const leases = queues.map((queue) => sleep(Math.random() * 3).then(() => queue.lease(0, { models: [model] })));
        await Promise.all(burst);
        const got = (await Promise.all(leases)).filter((leased): leased is LeasedReply => leased !== null);
        const more = (await Promise.all(queues.map((queue) => queue.lease(0, { models: [model] })))).filter(
          (leased): leased is LeasedReply => leased !== null,
        );
        const all = [...got, ...more];
        if (all.length !== 1)
          leasedTogether.push(`${conversationId}: ${all.map((leased) => leased.job.id).join(', ')}`);
        for (const leased of all) await queues[0]!.ack(leased);
        // Drain the rest one at a time so the next round starts empty.
        for (;;) {
          const next = await queues[1]!.lease(0, { models: [model] });
          if (!next) break;
          expect(await queues[2]!.ack(next)).toBe(true);
        }
      }
      expect(leasedTogether).toEqual([]);
      expect(await queues[0]!.size()).toBe(0);
    } finally {
      for (const queue of queues) await queue.close();
      await schema.cleanup();
    }
  }, 60_000);
});
