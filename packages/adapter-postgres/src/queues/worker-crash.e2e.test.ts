/**
 * @module A worker process killed with SIGKILL while it holds jobs loses nothing: its delivery
 * jobs and its conversations' replies are handed out again once its leases run out, each job
 * once, replies still in order. The worker is a real child process on the built package.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { contractJob } from '@parley/core/testing';
import type { LeasedJob, ReplyJob } from '@parley/core/adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.js';
import { sqlFromPool, type Sql } from '../sql.js';
import { createTestDatabase, describeIfPostgres, probePostgres, type TestDatabase } from '../testing/index.js';
import { createPostgresQueues, type PostgresQueues } from './index.js';

const child = fileURLToPath(new URL('../../test/queue-worker-child.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const LEASE_MS = 1_500;

/** Starts the child worker and resolves with the ids it leased, once it printed them; `kill()` SIGKILLs it. */
async function leaseInChild(url: string, schema: string, kind: 'delivery' | 'reply', count: number) {
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm test\`, which builds before testing.`);
  const process_ = spawn(process.execPath, [child, url, schema, kind, String(count), String(LEASE_MS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  process_.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ids = await new Promise<string[]>((resolve, reject) => {
    let stdout = '';
    process_.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as string[]);
    });
    process_.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${stderr}`)));
  });
  const exited = new Promise((resolve) => process_.once('exit', resolve));
  return { ids, kill: async () => (process_.kill('SIGKILL'), await exited) };
}

describeIfPostgres({ describe, it }, await probePostgres())('a queue worker killed with SIGKILL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let sql: Sql;
  let queues: PostgresQueues;
  const schema = 'crash';

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    sql = sqlFromPool(pool);
    await migrate(sql, schema);
    queues = createPostgresQueues({
      sql,
      schema,
      listen: { connection: { connectionString: database.url } },
      deliveryLeaseMs: LEASE_MS,
      replyLeaseMs: LEASE_MS,
      vacuumEveryMs: false,
    });
  });
  afterAll(async () => {
    await queues?.close();
    await pool?.end();
    await database?.drop();
  });

  it('holds its delivery jobs only until their lease ends; another worker then gets each job once', async () => {
    const jobs = Array.from({ length: 30 }, (_, i) => contractJob(i));
    await queues.deliveryQueue.enqueue(jobs);
    const worker = await leaseInChild(database.url, schema, 'delivery', 10);
    expect(worker.ids).toEqual(jobs.slice(0, 10).map((job) => job.id));
    await worker.kill();
    const killedAt = Date.now();
    const leased: LeasedJob[] = [];
    while (leased.length < jobs.length) {
      const batch = await queues.deliveryQueue.lease('first', 50, 5_000);
      if (batch.length === 0) break;
      leased.push(...batch);
      for (const item of batch) await queues.deliveryQueue.ack(item);
    }
    expect(leased.map((item) => item.job.id).sort()).toEqual(jobs.map((job) => job.id).sort());
    // The killed worker's jobs came back after its lease, not before.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS - 700);
    expect(await queues.deliveryQueue.stats()).toEqual({ first: 0, retry: 0, scheduled: 0, leased: 0 });
  });

  it('holds its conversations only until their leases end; their replies then go on in order', async () => {
    let clock = Date.now();
    const jobs: ReplyJob[] = [];
    for (let n = 0; n < 3; n += 1) {
      for (let c = 0; c < 4; c += 1) {
        const requestedAt = (clock += 1);
        const job = {
          id: `rpl_${c}_${n}`,
          workspaceId: 'ws_crash',
          conversationId: `conv_${c}`,
          inReplyTo: null,
          requestedAt,
          model: 'm',
        };
        jobs.push(job);
        await queues.replyQueue.enqueue(job);
      }
    }
    const worker = await leaseInChild(database.url, schema, 'reply', 4);
    expect(worker.ids.sort()).toEqual(['rpl_0_0', 'rpl_1_0', 'rpl_2_0', 'rpl_3_0']);
    // While it lives, its conversations are held: nothing else of them is handed out.
    expect(await queues.replyQueue.lease(0, { models: ['m'] })).toBeNull();
    await worker.kill();
    const served: string[] = [];
    for (;;) {
      const leased = await queues.replyQueue.lease(5_000, { models: ['m'] });
      if (!leased) break;
      served.push(leased.job.id);
      expect(await queues.replyQueue.ack(leased)).toBe(true);
      if (served.length === jobs.length) break;
    }
    expect([...served].sort()).toEqual(jobs.map((job) => job.id).sort());
    for (let c = 0; c < 4; c += 1)
      expect(served.filter((id) => id.startsWith(`rpl_${c}_`))).toEqual([0, 1, 2].map((n) => `rpl_${c}_${n}`));
    expect(await queues.replyQueue.size()).toBe(0);
  });
});
