/**
 * @module Bench: do the queue tables stay flat under steady traffic? Drives the delivery queue
 * (enqueue, lease, ack, a fifth retried 2 s later), the reply queue and the feed's polling table
 * at a steady rate and prints every table's `pg_total_relation_size` (and dead tuples) over time.
 *
 * Run: `npx tsx packages/adapter-postgres/bench/queue-sizes.ts [minutes=4] [jobs per second=300]`
 * against `PARLEY_TEST_DATABASE_URL`'s server (default postgres://postgres@127.0.0.1:5432), in a
 * database made for the run and dropped after. Job rows are deleted when acked; feed rows after
 * 60 s; vacuum (autovacuum, tuned per table in 0002_queues.sql) reuses their space, so after a
 * warm-up of a minute or two the sizes stop growing. Not part of `npm test`; nothing is asserted.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DeliveryJob } from '@parley/core/adapter';
import { migrate } from '../src/migrate.js';
import { createPostgresQueues, PostgresConversationFeed } from '../src/queues/index.js';
import { sqlFromPool } from '../src/sql.js';
import { createTestDatabase } from '../src/testing/index.js';

const minutes = Number(process.argv[2] ?? 4);
const perSecond = Number(process.argv[3] ?? 300);
const SCHEMA = 'parley';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const database = await createTestDatabase();
const pool = new pg.Pool({ connectionString: database.url, max: 8 });
const sql = sqlFromPool(pool);
await migrate(sql, SCHEMA);
const queues = createPostgresQueues({
  sql,
  schema: SCHEMA,
  listen: { connection: { connectionString: database.url } },
});
const tableFeed = new PostgresConversationFeed({ sql, schema: SCHEMA, notifier: null });
const end = Date.now() + minutes * 60_000;
const counts = { enqueued: 0, acked: 0, retried: 0, replies: 0, signals: 0 };

const job = (n: number): DeliveryJob => ({
  id: `job_${randomUUID()}`,
  workspaceId: 'ws_bench',
  endpointId: `wh_${n % 20}`,
  event: {
    id: `evt_${randomUUID()}`,
    type: 'message.sent',
    workspaceId: 'ws_bench',
    occurredAt: new Date().toISOString(),
    data: { id: `msg_${n}`, content: 'x'.repeat(300) } as never,
  },
  attempt: 1,
  trigger: 'scheduled',
});

async function produce(): Promise<void> {
  const batch = Math.max(1, Math.round(perSecond / 10));
  for (let n = 0; Date.now() < end; n += 1) {
    await queues.deliveryQueue.enqueue(Array.from({ length: batch }, (_, i) => job(n * batch + i)));
    counts.enqueued += batch;
    const conversationId = `conv_${n % 50}`;
    const reply = {
      id: `rpl_${randomUUID()}`,
      workspaceId: 'ws_bench',
      conversationId,
      inReplyTo: null,
      requestedAt: Date.now(),
    };
    await queues.replyQueue.enqueue({ ...reply, model: 'm' });
    for (let i = 0; i < 5; i += 1)
      await tableFeed.publish({ workspaceId: 'ws_bench' }, `conv_${n % 50}`, {
        type: 'message.delta',
        inReplyTo: null,
        delta: 'token '.repeat(5),
        attempt: 1,
      });
    counts.signals += 5;
    await sleep(100);
  }
}

async function work(lane: 'first' | 'retry'): Promise<void> {
  while (Date.now() < end) {
    for (const leased of await queues.deliveryQueue.lease(lane, 50, 500)) {
      if (lane === 'first' && Math.random() < 0.2) {
        await queues.deliveryQueue.retry(
          leased,
          { ...leased.job, id: `${leased.job.id}_r`, attempt: 2 },
          Date.now() + 2_000,
        );
        counts.retried += 1;
      } else {
        await queues.deliveryQueue.ack(leased);
        counts.acked += 1;
      }
    }
  }
}

async function reply(): Promise<void> {
  while (Date.now() < end) {
    const leased = await queues.replyQueue.lease(500, { models: ['m'] });
    if (!leased) continue;
    await queues.replyQueue.extend(leased);
    await queues.replyQueue.ack(leased);
    counts.replies += 1;
  }
}

async function report(): Promise<void> {
  const started = Date.now();
  console.log(`queue tables under ~${perSecond} jobs/s for ${minutes} min (sizes in kB, dead tuples in brackets)`);
  while (Date.now() < end) {
    const rows = await sql.query<{ relname: string; size: number; dead: number; live: number }>(
      `SELECT c.relname, pg_total_relation_size(c.oid)::int8 AS size, coalesce(s.n_dead_tup, 0)::int8 AS dead, coalesce(s.n_live_tup, 0)::int8 AS live
       FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
       WHERE c.relnamespace = $1::regnamespace AND c.relname IN ('delivery_jobs', 'reply_jobs', 'feed_signals') ORDER BY c.relname`,
      [SCHEMA],
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    const sizes = rows.map((row) => `${row.relname} ${Math.round(row.size / 1024)} [${row.dead}]`).join('  ');
    console.log(
      `${String(seconds).padStart(4)} s  ${sizes}  | enqueued ${counts.enqueued} acked ${counts.acked} retried ${counts.retried} replies ${counts.replies} signals ${counts.signals}`,
    );
    await sleep(15_000);
  }
}

try {
  await Promise.all([produce(), work('first'), work('first'), work('retry'), reply(), reply(), report()]);
} finally {
  await tableFeed.close();
  await queues.close();
  await pool.end();
  await database.drop();
}
