/**
 * @module The queues under load through a PostgreSQL restart and a paused database (a private
 * server, so the shared one is never touched): every enqueue that resolved is handed out, calls
 * made meanwhile fail with `service_unavailable` only, and NOTIFY wakes workers again afterwards.
 */
import pg from 'pg';
import { contractJob } from '@parley/core/testing';
import { isParleyError } from '@parley/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.js';
import { sqlFromPool } from '../sql.js';
import {
  describeIfPostgres,
  probePostgresBinaries,
  startPrivatePostgres,
  type PrivatePostgres,
} from '../testing/index.js';
import { createPostgresQueues, type PostgresQueues } from './index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeIfPostgres({ describe, it }, await probePostgresBinaries())(
  'queues through a PostgreSQL restart and pause',
  () => {
    let server: PrivatePostgres;
    let pool: pg.Pool;
    let queues: PostgresQueues;

    beforeAll(async () => {
      server = await startPrivatePostgres();
      pool = new pg.Pool({ connectionString: server.url, max: 6, connectionTimeoutMillis: 1_000 });
      pool.on('error', () => {});
      const sql = sqlFromPool(pool);
      await migrate(sql, 'parley');
      queues = createPostgresQueues({
        sql,
        listen: { connection: { connectionString: server.url } },
        deliveryLeaseMs: 2_000,
        replyLeaseMs: 2_000,
        vacuumEveryMs: false,
      });
    });
    afterAll(async () => {
      server?.pause(false);
      await queues?.close();
      await pool?.end().catch(() => {});
      await server?.destroy();
    });

    it('hands out every job whose enqueue resolved; faults are service_unavailable; NOTIFY wakes workers again', async () => {
      const enqueued = new Set<string>();
      const received = new Set<string>();
      const repliesEnqueued = new Set<string>();
      const repliesReceived = new Set<string>();
      const errors: unknown[] = [];
      let producing = true;
      let working = true;
      const attempt = async (work: () => Promise<void>) => {
        try {
          await work();
        } catch (error) {
          errors.push(error);
          await sleep(100);
        }
      };
      const producer = async () => {
        for (let n = 0; producing; n += 1) {
          const jobs = Array.from({ length: 10 }, (_, i) => contractJob(n * 10 + i));
          await attempt(async () => {
            await queues.deliveryQueue.enqueue(jobs);
            jobs.forEach((job) => enqueued.add(job.id));
          });
          const conversationId = `conv_${n % 7}`;
          const reply = {
            id: `rpl_${n}`,
            workspaceId: 'ws',
            conversationId,
            inReplyTo: null,
            requestedAt: Date.now(),
            model: 'm',
          };
          await attempt(async () => {
            await queues.replyQueue.enqueue(reply);
            repliesEnqueued.add(reply.id);
          });
          await sleep(30);
        }
      };
      const deliveryWorker = async () => {
        while (working) {
          await attempt(async () => {
            for (const item of await queues.deliveryQueue.lease('first', 20, 200)) {
              received.add(item.job.id);
              await queues.deliveryQueue.ack(item);
            }
          });
        }
      };
      const replyWorker = async () => {
        while (working) {
          await attempt(async () => {
            const leased = await queues.replyQueue.lease(200, { models: ['m'] });
            if (!leased) return;
            repliesReceived.add(leased.job.id);
            await queues.replyQueue.ack(leased);
          });
        }
      };
      const running = [producer(), deliveryWorker(), deliveryWorker(), replyWorker(), replyWorker()];

      await sleep(1_000);
      await server.stop();
      await sleep(1_000);
      await server.start();
      await sleep(1_500);
      server.pause(true);
      await sleep(1_500);
      server.pause(false);
      await sleep(1_000);
      producing = false;
      // Drain: jobs whose ack was lost in the outage come back once their lease ends.
      for (const end = Date.now() + 15_000; Date.now() < end;) {
        if (
          [...enqueued].every((id) => received.has(id)) &&
          [...repliesEnqueued].every((id) => repliesReceived.has(id))
        )
          break;
        await sleep(100);
      }
      working = false;
      await Promise.all(running);

      expect(enqueued.size).toBeGreaterThan(200);
      expect([...enqueued].filter((id) => !received.has(id))).toEqual([]);
      expect([...repliesEnqueued].filter((id) => !repliesReceived.has(id))).toEqual([]);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.filter((error) => !isParleyError(error, 'service_unavailable')).map(String)).toEqual([]);

      // The LISTEN connection came back: a waiting lease wakes on NOTIFY, well within its 1 s poll.
      await sleep(1_000);
      const waiting = queues.deliveryQueue.lease('first', 1, 5_000);
      await sleep(200);
      const sent = Date.now();
      await queues.deliveryQueue.enqueue([contractJob(99_999)]);
      expect(await waiting).toHaveLength(1);
      expect(Date.now() - sent).toBeLessThan(400);
    }, 60_000);
  },
);
