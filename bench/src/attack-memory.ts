/**
 * @module Benchmark: does hostile input with distinct values grow the ready-made server's memory?
 * Starts `parley serve` on memory storage (`packages/http/bin/parley.js`, which runs the build) as a child
 * process and sends it two rounds of the same number of requests, every one with values an
 * attacker picks fresh each time: unknown bearer keys (well-formed, malformed and generated-format
 * ones), random ids in the `/api` and `/sandbox` routes that take one, random paths, random query
 * strings, `X-Request-Id`s, `If-Match`/`If-None-Match` tags, JSON field names and
 * `Idempotency-Key`s. After each round it prints the server's RSS (from /proc) and its V8 heap
 * (from its Prometheus metrics); what matters is the second round's growth: the first pays for
 * warm-up (JIT, heap sizing), the second only for what distinct input leaves behind.
 *
 * The valid key's plan is `pro` by default, as the development key of `parley serve`: past its
 * limit its requests stop at 429. `enterprise` gives it a limit no round reaches, so every keyed
 * request reaches its route (and a kept `Idempotency-Key` response).
 *
 * Run: `npm run bench:attack-memory -- [requests per round=100000] [concurrency=32] [runs=3]
 * [plan=pro|enterprise]` (builds first); each run starts a fresh server. Exits 1 when a second
 * round grew RSS by 25 MiB or more. Not part of `npm test` (it takes minutes); the bounded
 * structures' caps are asserted by unit tests beside them.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const perRound = Number(process.argv[2] ?? 100_000);
const concurrency = Number(process.argv[3] ?? 32);
const runs = Number(process.argv[4] ?? 3);
/** The valid key's plan: `pro` (the development key's) or `enterprise` (a limit no round reaches). */
const plan = process.argv[5] ?? 'pro';
const BOUND_MIB = 25;
const KEY = `attack_bench_${randomBytes(12).toString('hex')}`;
const cli = fileURLToPath(new URL('../../packages/http/bin/parley.js', import.meta.url));
const MiB = 1024 * 1024;

/** Resident set size of `pid` in bytes (VmRSS of /proc/<pid>/status). */
function rss(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? NaN) * 1024;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const ulidish = () => randomBytes(13).toString('base64url').toUpperCase().slice(0, 26);
const ids = () => [
  `agt_${ulidish()}`,
  `conv_${ulidish()}`,
  `msg_${ulidish()}`,
  `wh_${ulidish()}`,
  hex(8),
  String(randomInt(1e9)),
];
const pick = <T>(items: readonly T[]) => items[randomInt(items.length)]!;

/** One hostile request: method, path with query, header fields and body, all with fresh values. */
function hostileRequest(): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const id = pick(ids());
  const query = `?${hex(4)}=${hex(6)}&cursor=${hex(10)}&userId=${hex(6)}`;
  const common = { 'x-request-id': `req_${hex(12)}`, 'user-agent': `attacker/${hex(4)}` };
  const valid = { ...common, authorization: `Bearer ${KEY}` };
  switch (randomInt(12)) {
    case 0: // an unknown key of the generated format (its checksum fails, or is right by chance)
      return {
        method: 'GET',
        path: `/api/agents${query}`,
        headers: { ...common, authorization: `Bearer prl_${randomBytes(27).toString('base64url').slice(0, 36)}` },
      };
    case 1: // an unknown key of any other form
      return { method: 'GET', path: `/api/agents/${id}`, headers: { ...common, authorization: `Bearer ${hex(24)}` } };
    case 2: // a malformed header
      return { method: 'GET', path: `/api/conversations`, headers: { ...common, authorization: `Basic ${hex(16)}` } };
    case 3: // a random path without a key
      return { method: pick(['GET', 'POST', 'DELETE', 'PATCH']), path: `/${hex(6)}/${id}${query}`, headers: common };
    case 4: // a random path under /api with the valid key
      return {
        method: pick(['GET', 'PUT', 'OPTIONS']),
        path: `/api/${hex(5)}/${id}/${hex(3)}${query}`,
        headers: valid,
      };
    case 5:
      return {
        method: 'GET',
        path: `/api/agents/${id}${query}`,
        headers: { ...valid, 'if-none-match': `"${hex(16)}"` },
      };
    case 6:
      return { method: 'GET', path: `/api/conversations/${id}/messages${query}`, headers: valid };
    case 7:
      return {
        method: 'PATCH',
        path: `/api/agents/${id}`,
        headers: { ...valid, 'content-type': 'application/json', 'if-match': `"${hex(16)}"` },
        body: JSON.stringify({ name: hex(8) }),
      };
    case 8: // an Idempotency-Key on a create that fails validation
      return {
        method: 'POST',
        path: '/api/agents',
        headers: { ...valid, 'content-type': 'application/json', 'idempotency-key': `idem_${hex(16)}` },
        body: JSON.stringify({ [hex(4)]: hex(8) }),
      };
    case 9:
      return {
        method: 'POST',
        path: `/api/conversations/${id}/messages`,
        headers: { ...valid, 'content-type': 'application/json', 'idempotency-key': `idem_${hex(16)}` },
        body: JSON.stringify({ role: 'user', content: hex(16) }),
      };
    case 10:
      return { method: 'DELETE', path: `/sandbox/plants/${pick([String(randomInt(1e9)), hex(6)])}`, headers: valid };
    default:
      return { method: 'GET', path: `/api/webhooks/${id}/deliveries${query}`, headers: valid };
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

function send(base: URL): Promise<number> {
  const { method, path, headers, body } = hostileRequest();
  return new Promise((resolve) => {
    const outgoing = request({ host: base.hostname, port: base.port, method, path, headers, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', () => resolve(0));
    outgoing.end(body);
  });
}

/** Sends `count` hostile requests, `concurrency` at a time; resolves with how many got each status. */
async function round(base: URL, count: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next += 1;
        const status = await send(base);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

/** A port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The V8 heap figures among the server's Prometheus metrics, in MiB, as one line. */
async function heapFigures(metricsPort: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^parley_${name} ([\\d.e+]+)`, 'm').exec(text)?.[1] ?? NaN) / MiB;
  const spaces = [...text.matchAll(/^parley_nodejs_heap_space_size_total_bytes\{space="(\w+)"\} ([\d.e+]+)/gm)]
    .map(([, space, bytes]) => `${space} ${(Number(bytes) / MiB).toFixed(1)}`)
    .join(', ');
  return `heap used ${value('nodejs_heap_size_used_bytes').toFixed(1)} of ${value(
    'nodejs_heap_size_total_bytes',
  ).toFixed(1)} MiB (${spaces}); external ${value('nodejs_external_memory_bytes').toFixed(1)} MiB`;
}

/** One server, two rounds: prints each round's figures and resolves with the second round's RSS growth in MiB. */
async function measure(run: number): Promise<number> {
  const metricsPort = await freePort();
  const keys = [
    { key: KEY, workspace: 'attacked', plan, ...(plan === 'enterprise' ? { limitPerHour: 3_600_000 } : {}) },
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'info',
    API_KEYS: JSON.stringify(keys),
  };
  for (const name of ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'DATABASE_URL', 'DATA_DIR']) delete env[name];
  const server = spawn(process.execPath, [cli, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  // The request log is read and dropped, as a log shipper would: unread, the pipe would stall the server.
  let banner = '';
  const base = await new Promise<URL>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`parley serve exited with ${code}:\n${banner}`)));
    server.stdout!.on('data', (chunk: Buffer) => {
      if (banner.length > 10_000) return;
      banner += chunk.toString('utf8');
      const url = /listening on (http:\/\/[\d.]+:\d+)/.exec(banner)?.[1];
      if (url) resolve(new URL(url));
    });
  });
  const rssAt = [rss(server.pid!)];
  console.log(
    `run ${run}: parley serve (memory), ${perRound} hostile requests per round, ${concurrency} at a time; start RSS ${(
      rssAt[0]! / MiB
    ).toFixed(1)} MiB`,
  );
  for (const name of ['first', 'second']) {
    const started = performance.now();
    const statuses = await round(base, perRound);
    // Let timers and the log stream settle before reading.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    rssAt.push(rss(server.pid!));
    const grew = (rssAt.at(-1)! - rssAt.at(-2)!) / MiB;
    const counts = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
    console.log(
      `  ${name} round: RSS ${(rssAt.at(-1)! / MiB).toFixed(1)} MiB (${grew >= 0 ? '+' : ''}${grew.toFixed(1)}) in ${(
        (performance.now() - started) /
        1000
      ).toFixed(1)} s; ${counts}`,
    );
    console.log(`    ${await heapFigures(metricsPort)}`);
  }
  await new Promise((resolve) => {
    server.once('exit', resolve);
    server.kill('SIGTERM');
  });
  return (rssAt[2]! - rssAt[1]!) / MiB;
}

const growths: number[] = [];
for (let run = 1; run <= runs; run += 1) growths.push(await measure(run));
agent.destroy();
console.log(
  `second round's RSS growth per run: ${growths
    .map((growth) => `${growth.toFixed(1)} MiB`)
    .join(', ')} (bound: under ${BOUND_MIB} MiB every time)`,
);
if (growths.some((growth) => growth >= BOUND_MIB)) process.exitCode = 1;
