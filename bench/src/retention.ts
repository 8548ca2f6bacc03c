/**
 * @module Benchmark: do PostgreSQL's retained tables stay flat under steady traffic? A core on
 * `postgresAdapters` with event retention set to minutes appends messages at a steady rate, each
 * recording its event and outbox row; the outbox relay and the delivery worker deliver every event
 * to a webhook receiver in this process (one attempt logged per delivery); each message also
 * claims and completes an `Idempotency-Key` kept as long as events are. The retention sweep runs
 * every 15 s. Every 15 s it prints each table's `pg_total_relation_size` and live rows, and at the
 * end each retained table's size after warm-up (two retention periods) against its largest
 * since: flat means that ratio stays near 1 while `messages` (the store of record, never
 * expired) keeps growing.
 *
 * Run: `npm run bench:retention -- [minutes=6] [messages per second=200] [retention minutes=1]`
 * (builds first; writes what it prints to bench/RETENTION.md). It runs on a private PostgreSQL server it starts (`initdb` and `postgres` on
 * PATH) and removes after, with autovacuum on as on any production server, its naptime scaled
 * down with the retention (15 s instead of 1 min): the sweep deletes expired rows and
 * autovacuum makes their space reusable. Not part of `npm test`; nothing is asserted.
 * The queue tables (`delivery_jobs`, `reply_jobs`) are shown too; the adapter's
 * `bench/queue-sizes.ts` drives them harder.
 */
import { postgresAdapters } from '@parley/adapter-postgres';
import { probePostgresBinaries, startPrivatePostgres } from '@parley/adapter-postgres/testing';
import { createCore, undiciTransport } from '@parley/core';
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { startCountingReceiver } from './receiver.js';

const minutes = Number(process.argv[2] ?? 6);
const perSecond = Number(process.argv[3] ?? 200);
const retentionMinutes = Number(process.argv[4] ?? 1);
const retentionMs = retentionMinutes * 60_000;
const WS = 'ws_retention';
const RETAINED = ['events', 'outbox', 'deliveries', 'idempotency_keys'];
const TABLES = [...RETAINED, 'delivery_jobs', 'messages'];
const REPORT_MS = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** What is printed, also written to bench/RETENTION.md at the end. */
const printed: string[] = [];
const print = (line: string) => {
  console.log(line);
  printed.push(line);
};

const problem = await probePostgresBinaries();
if (problem) {
  console.error(`${problem}: nothing to measure.`);
  process.exit(1);
}

const receiver = await startCountingReceiver('/hook');

const server = await startPrivatePostgres({ autovacuum: 'on', autovacuum_naptime: '15s' });
const adapters = postgresAdapters({
  connectionString: server.url,
  eventRetentionMs: retentionMs,
  sweepIntervalMs: REPORT_MS,
});
await adapters.ready();
const transport = undiciTransport({ allowPrivate: true });
const core = createCore(adapters, { webhookTransport: transport, allowPrivateWebhookUrls: true });
await core.webhooks.create({ workspaceId: WS }, { url: receiver.url, events: ['message.sent'] });
const agent = await core.agents.create(
  { workspaceId: WS },
  { name: 'Retention', description: 'bench', model: 'modelA-4' },
);
const conversations = await Promise.all(
  Array.from({ length: 20 }, (_, n) =>
    core.conversations.create({ workspaceId: WS }, { agentId: agent.id, userId: `user_${n}` }),
  ),
);
core.workers.relay.start();
core.workers.delivery.start();

const started = Date.now();
const end = started + minutes * 60_000;
let sent = 0;

/** One message and one idempotency key per 1/perSecond s, sent in ticks of 100 ms. */
async function produce(): Promise<void> {
  const perTick = Math.max(1, Math.round(perSecond / 10));
  for (let tick = 0; Date.now() < end; tick += 1) {
    await Promise.all(
      Array.from({ length: perTick }, async (_, i) => {
        const n = tick * perTick + i;
        const conversation = conversations[n % conversations.length]!;
        const claim = await core.idempotency.claim(
          { workspaceId: WS },
          { key: `key_${n}`, fingerprint: 'fingerprint', leaseMs: 60_000 },
        );
        const message = await core.conversations.sendMessage({ workspaceId: WS }, conversation.id, {
          role: 'user',
          content: `Message ${n}: ${'lorem ipsum '.repeat(20)}`,
        });
        if (claim.outcome === 'claimed') {
          await core.idempotency.complete(
            { workspaceId: WS },
            {
              key: `key_${n}`,
              token: claim.token,
              response: { status: 201, contentType: 'application/json', body: JSON.stringify(message) },
              ttlMs: retentionMs,
            },
          );
        }
        sent += 1;
      }),
    );
    await sleep(Math.max(0, started + (tick + 1) * 100 - Date.now()));
  }
}

type Sizes = Map<string, { size: number; live: number }>;
async function sizes(): Promise<Sizes> {
  const rows = await adapters.sql.query<{ relname: string; size: string; live: string }>(
    `SELECT c.relname, pg_total_relation_size(c.oid)::int8 AS size, coalesce(s.n_live_tup, 0)::int8 AS live
     FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE c.relnamespace = 'parley'::regnamespace AND c.relname = ANY($1::text[])`,
    [TABLES],
  );
  return new Map(rows.map((row) => [row.relname, { size: Number(row.size), live: Number(row.live) }]));
}

const samples: Array<{ seconds: number; sizes: Sizes }> = [];
async function report(): Promise<void> {
  print(
    `${perSecond} messages/s for ${minutes} min, retention ${retentionMinutes} min; sizes in kB, live rows in brackets`,
  );
  while (Date.now() < end) {
    await sleep(REPORT_MS);
    const now = await sizes();
    const seconds = Math.round((Date.now() - started) / 1000);
    samples.push({ seconds, sizes: now });
    const cells = TABLES.map(
      (table) => `${table} ${Math.round((now.get(table)?.size ?? 0) / 1024)} [${now.get(table)?.live ?? 0}]`,
    );
    print(`${String(seconds).padStart(4)} s  ${cells.join('  ')}  | sent ${sent} delivered ${receiver.delivered()}`);
  }
}

try {
  await Promise.all([produce(), report()]);
  const warm = samples.find((sample) => sample.seconds >= (2 * retentionMs) / 1000);
  if (!warm) print(`\nToo short to judge: warm-up is two retention periods (${2 * retentionMinutes} min).`);
  else {
    print(`\nAfter warm-up (${warm.seconds} s): largest size since, against the size then`);
    for (const table of TABLES) {
      const then = warm.sizes.get(table)?.size ?? 0;
      const largest = Math.max(
        ...samples
          .filter((sample) => sample.seconds >= warm.seconds)
          .map((sample) => sample.sizes.get(table)?.size ?? 0),
      );
      const last = samples.at(-1)!.sizes.get(table)?.size ?? 0;
      const kind = RETAINED.includes(table)
        ? 'retained'
        : table === 'messages'
          ? 'store of record, never expired'
          : 'queue';
      print(
        `  ${table.padEnd(17)} ${(largest / Math.max(1, then)).toFixed(2)} ×  (${Math.round(then / 1024)} kB then, ${Math.round(last / 1024)} kB at the end; ${kind})`,
      );
    }
  }
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const header = `# Retention on PostgreSQL\n\nGenerated by \`npm run bench:retention -- ${minutes} ${perSecond} ${retentionMinutes}\` on ${new Date().toISOString().slice(0, 10)}, commit ${commit}, Node ${process.version}.`;
  writeFileSync(new URL('../RETENTION.md', import.meta.url), `${header}\n\n\`\`\`\n${printed.join('\n')}\n\`\`\`\n`);
} finally {
  await Promise.all([core.workers.relay.stop(), core.workers.delivery.stop()]);
  await transport.close();
  await adapters.close();
  await server.destroy();
  receiver.close();
}
