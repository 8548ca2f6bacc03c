/**
 * @module `npm run bench`: Parley's ready-made server against bare Hono and hand-written peers,
 * every figure from this one run on this machine.
 *
 * Primary figure: server CPU µs per request — the target process's own CPU time (utime + stime
 * from /proc) over the measured window, divided by the requests it completed. Throughput and
 * latency on a shared 2-core machine mostly measure the load generator and the neighbours; CPU
 * per request measures the server. Each scenario runs in ≥ 3 rounds interleaved with every other
 * scenario (noise hits all alike) and the median is kept; ratios are against bare Hono (GET or
 * POST) and the hand-written peer measured in the same run. On Redis it also counts, per request,
 * the commands the server sent and the round trips they took (MONITOR).
 *
 * Environment: `BENCH_ROUNDS` (3), `BENCH_SECONDS` per measurement (3), `BENCH_LARGE` (1 000 000
 * messages), `REDIS_URL` (redis://127.0.0.1:6379; Redis scenarios are left out when it does not
 * answer). Writes the table to bench/RESULTS.md.
 */
import autocannon from 'autocannon';
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONNECTIONS = 50;
const TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

interface Target {
  name: string;
  script: string;
  env: Record<string, string>;
  redis?: boolean;
  process?: ChildProcess;
  info?: Record<string, any>;
}

interface Scenario {
  name: string;
  target: string;
  method: 'GET' | 'POST';
  path: (info: Record<string, any>) => string;
  body?: string;
  /** The bare-Hono scenario this one is a ratio to, and the peer scenario (same route, hand-written). */
  bare?: string;
  peer?: string;
}

interface Figures {
  cpuUs: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function redisAnswers(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function start(target: Target): Promise<void> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', target.script], {
    env: { ...process.env, ...target.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  target.process = child;
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.on('exit', (code) => reject(new Error(`${target.name} exited (${code}) before it was ready`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      // The ready line is the JSON object with a `port`; at LOG_LEVEL=info log lines come first.
      const ready = buffered.split('\n').slice(0, -1).filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => 'port' in line);
      if (ready && !target.info) {
        target.info = ready;
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        child.removeAllListeners('exit');
        resolve();
      }
    });
  });
}

function cpuTicks(pid: number): number {
  // Fields after the command name (which may contain spaces): utime and stime are 14th and 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function load(target: Target, scenario: Scenario, seconds: number) {
  const info = target.info!;
  return autocannon({
    url: `http://127.0.0.1:${info.port}${scenario.path(info)}`,
    method: scenario.method,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${info.key}`, ...(scenario.body && { 'content-type': 'application/json' }) },
    ...(scenario.body && { body: scenario.body }),
  });
}

async function measure(target: Target, scenario: Scenario): Promise<Figures> {
  await load(target, scenario, 1); // warm-up: JIT, connections, caches
  const pid = target.process!.pid!;
  const before = cpuTicks(pid);
  const result = await load(target, scenario, SECONDS);
  const ticks = cpuTicks(pid) - before;
  const completed = result.requests.total;
  return {
    cpuUs: ((ticks / TICKS_PER_SECOND) * 1e6) / Math.max(completed, 1),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** Commands the target sent per request, commands run (scripts included) and round trips (MONITOR). */
async function redisTraffic(target: Target, scenario: Scenario, requests = 50) {
  const monitor = await new Redis(REDIS_URL).monitor();
  const seen: Array<{ time: number; source: string }> = [];
  monitor.on('monitor', (time: string, _args: string[], source: string) => seen.push({ time: Number(time), source }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  seen.length = 0;
  const info = target.info!;
  for (let i = 0; i < requests; i += 1) {
    const response = await fetch(`http://127.0.0.1:${info.port}${scenario.path(info)}`, {
      method: scenario.method,
      headers: { authorization: `Bearer ${info.key}`, ...(scenario.body && { 'content-type': 'application/json' }) },
      ...(scenario.body && { body: scenario.body }),
    });
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 5)); // a gap between requests
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  monitor.disconnect();
  const sent = seen.filter((entry) => entry.source !== 'lua');
  // Commands of one round trip (a pipeline, or one command) arrive within microseconds of each
  // other; the next round trip waits at least for the reply to travel and the server to act on it.
  let trips = 0;
  for (let i = 0; i < sent.length; i += 1) if (i === 0 || sent[i]!.time - sent[i - 1]!.time > 0.00005) trips += 1;
  return { sent: sent.length / requests, run: seen.length / requests, trips: trips / requests };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const fixed = (value: number, digits = 0) => value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const withRedis = await redisAnswers();
if (!withRedis) console.warn(`⚠️  Redis at ${REDIS_URL} does not answer: Redis scenarios are left out.`);

const large = Number(process.env.BENCH_LARGE ?? 1_000_000);
const targets: Target[] = [
  { name: 'bare Hono', script: here('targets/peers.ts'), env: { PEER: 'bare' } },
  { name: 'Hono + Map peer', script: here('targets/peers.ts'), env: { PEER: 'map' } },
  { name: 'Parley memory', script: here('targets/parley.ts'), env: { LOG_LEVEL: 'warn', BENCH_LARGE: String(large) } },
  { name: 'Parley memory, info log', script: here('targets/parley.ts'), env: { LOG_LEVEL: 'info', BENCH_LARGE: '0' } },
  ...(withRedis
    ? [
        { name: 'Hono + ioredis peer', script: here('targets/peers.ts'), env: { PEER: 'ioredis', REDIS_URL }, redis: true },
        {
          name: 'Parley Redis',
          script: here('targets/parley.ts'),
          env: { LOG_LEVEL: 'warn', REDIS_URL, REDIS_PREFIX: `bench:${randomUUID().slice(0, 8)}:`, BENCH_LARGE: String(large), DELIVERY_WORKER: 'false' },
          redis: true,
        },
      ]
    : []),
];

const message = JSON.stringify({ role: 'user', content: 'Hello! I would like to know the status of my order, please.' });
const agent = (i: Record<string, any>) => `/api/agents/${i.agentId}`;
const history = (size: 'small' | 'medium' | 'large') => (i: Record<string, any>) => `/api/conversations/${i.conversations?.[size] ?? i.conversationId}/messages?limit=50`;
const append = (i: Record<string, any>) => `/api/conversations/${i.conversations?.append ?? i.conversationId}/messages`;

const scenarios: Scenario[] = [
  { name: 'bare GET (JSON object)', target: 'bare Hono', method: 'GET', path: () => '/json' },
  { name: 'bare POST (valibot into a Map)', target: 'bare Hono', method: 'POST', path: () => '/json', body: message },
  { name: 'GET agent', target: 'Hono + Map peer', method: 'GET', path: agent, bare: 'bare GET (JSON object)' },
  { name: 'list agents (20)', target: 'Hono + Map peer', method: 'GET', path: () => '/api/agents?limit=20', bare: 'bare GET (JSON object)' },
  { name: 'POST message', target: 'Hono + Map peer', method: 'POST', path: append, body: message, bare: 'bare POST (valibot into a Map)' },
  { name: 'history (50) at 10²', target: 'Hono + Map peer', method: 'GET', path: history('small'), bare: 'bare GET (JSON object)' },
];
for (const target of ['Parley memory', ...(withRedis ? ['Parley Redis'] : [])]) {
  const peer = target === 'Parley memory' ? 'Hono + Map peer' : 'Hono + ioredis peer';
  const peerOf = (name: string) => (target === 'Parley memory' || name !== 'list agents (20)' ? `${peer}: ${name}` : undefined);
  scenarios.push(
    { name: 'GET agent', target, method: 'GET', path: agent, bare: 'bare GET (JSON object)', peer: peerOf('GET agent') },
    { name: 'list agents (20)', target, method: 'GET', path: () => '/api/agents?limit=20', bare: 'bare GET (JSON object)', peer: peerOf('list agents (20)') },
    { name: 'POST message', target, method: 'POST', path: append, body: message, bare: 'bare POST (valibot into a Map)', peer: peerOf('POST message') },
    { name: 'history (50) at 10²', target, method: 'GET', path: history('small'), bare: 'bare GET (JSON object)', peer: peerOf('history (50) at 10²') },
    { name: 'history (50) at 10⁴', target, method: 'GET', path: history('medium'), bare: 'bare GET (JSON object)' },
    { name: `history (50) at ${large.toLocaleString('en')}`, target, method: 'GET', path: history('large'), bare: 'bare GET (JSON object)' },
  );
}
if (withRedis) {
  scenarios.push(
    { name: 'GET agent', target: 'Hono + ioredis peer', method: 'GET', path: agent, bare: 'bare GET (JSON object)' },
    { name: 'POST message', target: 'Hono + ioredis peer', method: 'POST', path: append, body: message, bare: 'bare POST (valibot into a Map)' },
    { name: 'history (50) at 10²', target: 'Hono + ioredis peer', method: 'GET', path: history('small'), bare: 'bare GET (JSON object)' },
  );
}
scenarios.push({ name: 'GET agent', target: 'Parley memory, info log', method: 'GET', path: agent, bare: 'bare GET (JSON object)', peer: 'Parley memory: GET agent' });

const started = Date.now();
console.log(`Starting ${targets.length} servers (seeding ${large.toLocaleString('en')} messages per Parley store)…`);
for (const target of targets) {
  const t0 = Date.now();
  await start(target);
  console.log(`  ${target.name}: ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

const key = (scenario: Scenario) => `${scenario.target}: ${scenario.name}`;
const samples = new Map<string, Figures[]>(scenarios.map((scenario) => [key(scenario), []]));
try {
  for (let round = 1; round <= ROUNDS; round += 1) {
    console.log(`Round ${round} of ${ROUNDS}…`);
    for (const scenario of scenarios) {
      const target = targets.find((candidate) => candidate.name === scenario.target)!;
      samples.get(key(scenario))!.push(await measure(target, scenario));
    }
  }
  const traffic = new Map<string, Awaited<ReturnType<typeof redisTraffic>>>();
  for (const scenario of scenarios) {
    const target = targets.find((candidate) => candidate.name === scenario.target)!;
    if (target.redis) traffic.set(key(scenario), await redisTraffic(target, scenario));
  }

  const figures = new Map([...samples].map(([name, runs]) => [name, {
    cpuUs: median(runs.map((run) => run.cpuUs)),
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  }]));
  const ratio = (name: string, other?: string) => {
    const base = other && figures.get(other);
    return base ? `${(figures.get(name)!.cpuUs / base.cpuUs).toFixed(2)} ×` : '—';
  };

  const rows = scenarios.map((scenario) => {
    const name = key(scenario);
    const f = figures.get(name)!;
    const t = traffic.get(name);
    return `| ${scenario.target} | ${scenario.name} | **${fixed(f.cpuUs)}** | ${fixed(f.rps)} | ${fixed(f.p50, 1)} | ${fixed(f.p99, 1)} | ${scenario.bare ? ratio(name, `bare Hono: ${scenario.bare}`) : '1.00 ×'} | ${ratio(name, scenario.peer)} | ${t ? `${fixed(t.trips, 1)} (${fixed(t.sent, 1)} sent, ${fixed(t.run, 1)} run)` : ''} |${f.errors ? ` ⚠️ ${f.errors} errors` : ''}`;
  });
  const parley = targets.find((target) => target.name === 'Parley memory')!.info!;
  const parleyRedis = targets.find((target) => target.name === 'Parley Redis')?.info;
  const commit = execSync('git rev-parse --short HEAD', { cwd: here('.') }).toString().trim();
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const report = [
    `# Benchmark results`,
    '',
    `${new Date().toISOString().slice(0, 10)}, commit ${commit}, Node ${process.version}, ${cpus().length} × ${cpu}. ` +
      `${ROUNDS} interleaved rounds of ${SECONDS} s per scenario, ${CONNECTIONS} connections (autocannon), medians. ` +
      `Took ${Math.round((Date.now() - started) / 1000)} s.`,
    '',
    '| server | scenario | server CPU µs / request | req/s | p50 ms | p99 ms | CPU vs bare Hono | CPU vs peer | Redis round trips / request |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `RSS per 10⁶ stored messages: memory ${fixed(parley.rssPerMillionMessages / 2 ** 20)} MiB` +
      (parleyRedis ? ` (the Redis server holds Redis's; the Parley process grew ${fixed(parleyRedis.rssPerMillionMessages / 2 ** 20)} MiB)` : '') + '.',
    '',
    '"CPU vs peer" is against the hand-written peer on the same route (for the info-log row: against the same server at warn).',
    'Redis round trips count the commands the server sent that arrived more than 50 µs after the previous one (a pipeline arrives at once); "run" includes the commands scripts ran.',
  ].join('\n');
  console.log(`\n${report}\n`);
  writeFileSync(here('../RESULTS.md'), `${report}\n`);
} finally {
  for (const target of targets) target.process?.kill('SIGTERM');
}
process.exit(0);
