/**
 * @module Benchmark: webhook deliveries per second and enqueue-to-first-attempt latency (p50, p99)
 * to a loopback receiver, with one delivery worker, on memory, Redis, PostgreSQL and PGlite.
 *
 * Run: `npm run bench:delivery [jobs]` (builds first; Redis at REDIS_URL or redis://127.0.0.1:6379,
 * skipped when unreachable; PostgreSQL at PARLEY_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432, in
 * a database made for the run and dropped after, skipped when unreachable; PGlite in a temporary
 * folder). For each backend:
 * - burst (after 1 s of warm-up bursts): `jobs` (default 5 000) delivery jobs enqueued at once, in batches of 100; figure:
 *   deliveries per second from the first enqueue to the last receipt;
 * - paced: jobs enqueued at 500/s for 4 s; figure: the time from each job's enqueue to its
 *   request reaching the receiver (p50, p99), i.e. latency when the worker keeps up;
 * - end to end: agents created through the core at 200/s for 3 s; figure: from the event's
 *   timestamp (taken just before its write commits) to the receiver, through the outbox relay.
 * The receiver answers 204 at once, in this same process (both share the machine's cores). Not
 * part of `npm test`; no figure is asserted.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { postgresAdapters } from '@parley/adapter-postgres';
import { createTestDatabase, probePostgres } from '@parley/adapter-postgres/testing';
import { redisAdapters } from '@parley/adapter-redis';
import { Redis } from 'ioredis';
import { createCore, undiciTransport, type Adapters, type DomainEvent } from '@parley/core';
import type { DeliveryJob } from '@parley/core/adapter';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const JOBS = Number(process.argv[2] ?? 5_000);
const WS = 'ws_bench';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Receipt times (performance.now()) by webhook-id. */
const arrivals = new Map<string, number>();
let waiting: { count: number; resolve: () => void } | undefined;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    arrivals.set(String(request.headers['webhook-id']), performance.now());
    response.writeHead(204).end();
    if (waiting && arrivals.size >= waiting.count) waiting.resolve();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

function until(count: number, timeoutMs = 120_000): Promise<void> {
  if (arrivals.size >= count) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${arrivals.size} of ${count} deliveries arrived`)),
      timeoutMs,
    );
    waiting = { count, resolve: () => (clearTimeout(timer), resolve()) };
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Row {
  backend: string;
  perSecond: number;
  p50: number;
  p99: number;
  e2eP50: number;
  e2eP99: number;
}

async function run(backend: string, adapters: Adapters): Promise<Row> {
  arrivals.clear();
  const transport = undiciTransport({ allowPrivate: true });
  const core = createCore(adapters, {
    webhookTransport: transport,
    allowPrivateWebhookUrls: true,
    workers: { delivery: { concurrency: { first: 32, retry: 4 }, perEndpoint: 32 } },
  });
  const endpoint = await core.webhooks.create({ workspaceId: WS }, { url, events: ['agent.created'] });
  // Only the delivery worker: the burst's jobs go straight to the queue.
  const worker = core.workers.delivery;
  worker.start();
  const jobFor = (event: DomainEvent): DeliveryJob => ({
    id: randomUUID(),
    workspaceId: WS,
    endpointId: endpoint.id,
    event,
    attempt: 1,
    trigger: 'scheduled',
  });
  const eventNow = (): DomainEvent => ({
    id: `evt_${randomUUID()}`,
    type: 'agent.created',
    workspaceId: WS,
    occurredAt: new Date().toISOString(),
    data: {} as never,
  });

  // Warm-up, 1 s of bursts as in the other scenarios: connections, and the JIT (after 200 jobs,
  // memory ran at half its warm rate).
  for (const warmUntil = performance.now() + 1_000; performance.now() < warmUntil;) {
    await adapters.deliveryQueue.enqueue(Array.from({ length: 500 }, () => jobFor(eventNow())));
    await until(500);
    arrivals.clear();
  }

  // Burst.
  const started = performance.now();
  for (let sent = 0; sent < JOBS; sent += 100) {
    await adapters.deliveryQueue.enqueue(Array.from({ length: Math.min(100, JOBS - sent) }, () => jobFor(eventNow())));
  }
  await until(JOBS);
  const perSecond = JOBS / ((performance.now() - started) / 1000);
  arrivals.clear();

  // Paced: 500 jobs/s (one every 2 ms, in groups of 10 every 20 ms).
  const enqueuedAt = new Map<string, number>();
  const pacedStart = performance.now();
  for (let group = 0; group < 200; group++) {
    const jobs = Array.from({ length: 10 }, () => jobFor(eventNow()));
    const at = performance.now();
    for (const job of jobs) enqueuedAt.set(job.event.id, at);
    await adapters.deliveryQueue.enqueue(jobs);
    const next = pacedStart + (group + 1) * 20;
    await sleep(Math.max(0, next - performance.now()));
  }
  await until(enqueuedAt.size);
  const latencies = [...enqueuedAt].map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
  arrivals.clear();

  // End to end through the event log and the outbox relay: 200 writes/s for 3 s.
  core.workers.relay.start();
  const e2eStart = performance.now();
  const writes: Array<Promise<unknown>> = [];
  for (let index = 0; index < 600; index++) {
    writes.push(
      core.agents.create({ workspaceId: WS }, { name: `a${index}`, description: 'bench', model: 'modelA-4' }),
    );
    await sleep(Math.max(0, e2eStart + (index + 1) * 5 - performance.now()));
  }
  await Promise.all(writes);
  await until(600);
  const events = (await collectEvents(core, 600)).map((event) => arrivalOffset(event)).sort((a, b) => a - b);

  await Promise.all([worker.stop(), core.workers.relay.stop()]);
  await transport.close();
  return {
    backend,
    perSecond: Math.round(perSecond),
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    e2eP50: round(percentile(events, 50)),
    e2eP99: round(percentile(events, 99)),
  };
}

/** The last `count` events of the log (the bench's writes). */
async function collectEvents(core: ReturnType<typeof createCore>, count: number): Promise<DomainEvent[]> {
  const all: DomainEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await core.storage.events.list(
      { workspaceId: WS },
      { limit: 100, ...(after !== undefined && { after }) },
    );
    if (!page || page.events.length === 0) break;
    all.push(...page.events);
    if (!page.hasMore) break;
    after = page.events.at(-1)!.id;
  }
  return all.slice(-count);
}

/** ms from the event's timestamp to its arrival (wall clock, both in this process). */
const origin = Date.now() - performance.now();
function arrivalOffset(event: DomainEvent): number {
  return origin + arrivals.get(event.id)! - Date.parse(event.occurredAt);
}

const round = (ms: number) => Math.round(ms * 10) / 10;

const rows: Row[] = [];
rows.push(await run('memory', memoryAdapters()));
const prefix = `parley-bench:${randomUUID().slice(0, 8)}:`;
const client = new Redis(redisUrl);
const redis = redisAdapters({ client, prefix, timeoutMs: 10_000 });
try {
  await redis.storage.ping();
  rows.push(await run('redis', redis));
} catch (error) {
  console.error(`Redis at ${redisUrl} skipped: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await redis.close();
  // Remove the bench's keys.
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  await client.quit();
}
// PostgreSQL (a database made for the run, dropped after) and PGlite (a temporary folder).
const problem = await probePostgres();
if (problem === null) {
  const database = await createTestDatabase();
  const postgres = postgresAdapters({ connectionString: database.url });
  try {
    await postgres.ready();
    rows.push(await run('postgresql', postgres));
  } finally {
    await postgres.close();
    await database.drop();
  }
} else console.error(`PostgreSQL skipped: ${problem}`);
const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
const pglite = postgresAdapters({ dataDir });
try {
  await pglite.ready();
  rows.push(await run('pglite', pglite));
} finally {
  await pglite.close();
  rmSync(dataDir, { recursive: true, force: true });
}
receiver.close();

console.log(`\nWebhook delivery, one worker (first lane 32 in flight), loopback receiver, ${JOBS} jobs in the burst\n`);
console.log('| backend | deliveries/s (burst) | enqueue → attempt p50 | p99 | event write → attempt p50 | p99 |');
console.log('|---|---|---|---|---|---|');
for (const row of rows)
  console.log(
    `| ${row.backend} | ${row.perSecond} | ${row.p50} ms | ${row.p99} ms | ${row.e2eP50} ms | ${row.e2eP99} ms |`,
  );
