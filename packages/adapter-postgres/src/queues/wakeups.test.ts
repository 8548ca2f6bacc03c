/**
 * @module Waiting workers wake on NOTIFY (well before their poll interval), still get the work by
 * polling without LISTEN, and go on after their LISTEN connection was killed.
 */
import { expect, it } from 'vitest';
import { contractJob } from '@parley/core/testing';
import { onEachBackend, openTestSchema } from '../../test/queues-fixture.js';
import { PostgresDeliveryQueue } from './postgres-delivery-queue.js';
import { PostgresReplyQueue } from './postgres-reply-queue.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

await onEachBackend('queue wake-ups', (backend, kind) => {
  it("a waiting lease wakes on another instance's enqueue well within its 1 s poll", async () => {
    const schema = await openTestSchema(backend());
    const [a, b] = [schema.open(), schema.open()];
    const waiting = new PostgresDeliveryQueue({ ...a, schema: schema.schema, pollMs: 1_000 });
    const other = new PostgresDeliveryQueue({ ...b, schema: schema.schema, pollMs: 1_000 });
    const replies = new PostgresReplyQueue({ ...a, schema: schema.schema, pollMs: 1_000 });
    const otherReplies = new PostgresReplyQueue({ ...b, schema: schema.schema, pollMs: 1_000 });
    try {
      // Warm up: the first lease with a wait starts LISTENing.
      await waiting.lease('first', 1, 1);
      await replies.lease(1, { models: ['m'] });
      for (let round = 0; round < 3; round += 1) {
        const lease = waiting.lease('first', 1, 5_000);
        const replyLease = replies.lease(5_000, { models: ['m'] });
        await sleep(150);
        const sent = Date.now();
        await other.enqueue([contractJob(round)]);
        const conversationId = `conv_${round}`;
        const job = { id: `rpl_${round}`, workspaceId: 'ws', conversationId, inReplyTo: null, requestedAt: sent };
        await otherReplies.enqueue({ ...job, model: 'm' });
        const [leased] = await lease;
        const reply = await replyLease;
        expect(Date.now() - sent).toBeLessThan(400);
        expect(leased?.job.id).toBe(`job_${String(round).padStart(5, '0')}_${leased!.job.id.slice(-8)}`);
        expect(reply?.job.id).toBe(`rpl_${round}`);
        await waiting.ack(leased!);
        await replies.ack(reply!);
      }
    } finally {
      for (const queue of [waiting, other, replies, otherReplies]) await queue.close();
      await schema.cleanup();
    }
  });

  it('without LISTEN, a waiting lease finds the job by polling within its poll interval', async () => {
    const schema = await openTestSchema(backend());
    const waiting = new PostgresDeliveryQueue({
      ...schema.open({ listen: false }),
      schema: schema.schema,
      pollMs: 300,
    });
    const other = new PostgresDeliveryQueue({ ...schema.open({ listen: false }), schema: schema.schema });
    try {
      const lease = waiting.lease('first', 1, 5_000);
      await sleep(100);
      const sent = Date.now();
      await other.enqueue([contractJob(1)]);
      expect(await lease).toHaveLength(1);
      expect(Date.now() - sent).toBeLessThan(300 + 250);
    } finally {
      await waiting.close();
      await other.close();
      await schema.cleanup();
    }
  });

  if (kind === 'postgres') {
    it('after its LISTEN connection is killed, a worker reconnects and wakes on NOTIFY again', async () => {
      const schema = await openTestSchema(backend());
      const [a, b] = [schema.open(), schema.open()];
      const waiting = new PostgresDeliveryQueue({ ...a, schema: schema.schema, pollMs: 1_000 });
      const other = new PostgresDeliveryQueue({ ...b, schema: schema.schema });
      try {
        await waiting.lease('first', 1, 1);
        const listeners = () =>
          b.sql.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'parley-listen'`,
          );
        // Kill every LISTENing backend of this database (the waiting worker's; the other never listened).
        // The LISTEN connection opens in the background, possibly after lease() returned.
        await expect.poll(async () => (await listeners()).length, { timeout: 5_000 }).toBe(1);
        for (const { pid } of await listeners()) await b.sql.query('SELECT pg_terminate_backend($1)', [pid]);
        // A lease waiting across the outage gets the job (by polling, or the reconnect's wake-up).
        const during = waiting.lease('first', 1, 5_000);
        await sleep(50);
        await other.enqueue([contractJob(1)]);
        const [first] = await during;
        expect(first).toBeDefined();
        await waiting.ack(first!);
        // Once reconnected (backoff starts at 100 ms), NOTIFY wakes it again, well within the 1 s poll.
        for (let i = 0; i < 50 && (await listeners()).length < 1; i += 1) await sleep(100);
        const lease = waiting.lease('first', 1, 5_000);
        await sleep(150);
        const sent = Date.now();
        await other.enqueue([contractJob(2)]);
        expect(await lease).toHaveLength(1);
        expect(Date.now() - sent).toBeLessThan(400);
      } finally {
        await waiting.close();
        await other.close();
        await schema.cleanup();
      }
    });
  }
});
