/**
 * @module `npm run bench:fleet`: a fleet of 1, 2 and 4 `parley serve` processes on one private
 * Redis, on a private 3-shard Redis Cluster and on a private PostgreSQL server, driven until
 * something saturates.
 *
 * Each row starts N `parley serve` instances (each with its delivery worker inside, the default:
 * N instances are N workers on one shared queue) on fresh storage (a new `REDIS_PREFIX`, or a new
 * database), 16 workspaces with an `enterprise` key each (3 600 000 requests an hour, the largest
 * limit: the limiter admits everything), one conversation and one webhook endpoint subscribed to
 * `message.sent` per workspace; the receiver is in this process and answers 204. Load: POST
 * /api/conversations/:id/messages over every workspace and instance, from `wrk` (one process per
 * instance, a Lua script cycling over the workspaces) when it is installed, else autocannon in a
 * child process. A warm-up of 2 s (its deliveries drained) precedes the window.
 *
 * Figures per row: messages/s (2xx over the window); deliveries/s arriving within the window and
 * how long the backlog took to drain after it; CPU µs per message of the servers (utime + stime
 * from /proc, summed over instances) and of the store (Redis: `INFO cpu` of each shard, i.e. the
 * redis-server process's getrusage; PostgreSQL: the postmaster and every process it forked, live
 * ones from /proc and exited ones through its cutime/cstime) with commands per message (`INFO
 * commandstats` calls, INFO itself left out, summed over shards) or statements per message
 * (pg_stat_statements calls, all databases) — costs from the window's start until the backlog
 * drained, so each message's delivery is included. CPU shares over the window: each server, each
 * Redis shard, PostgreSQL, the load generator (this process's cutime/cstime: its children that
 * exited) and the receiver (this process), and the whole machine's busy time (/proc/stat, neighbours
 * included); "saturated" names the busiest process, prefixed by "all cores" when the machine was ≥
 * 90 % busy.
 *
 * Environment: `BENCH_FLEET_SECONDS` per window (10), `BENCH_FLEET_INSTANCES` (1,2,4),
 * `BENCH_FLEET_BACKENDS` (redis,cluster,postgres; each is left out when its binaries are missing),
 * `BENCH_FLEET_CONNECTIONS` in all (64). Writes bench/FLEET.md; stops every process and removes
 * every private server and temporary folder at the end, on failure and on SIGINT too.
 */
import autocannon from 'autocannon';
import { probePostgresBinaries, startPrivatePostgres, type PrivatePostgres } from '@parley/adapter-postgres/testing';
import {
  freePort,
  probeRedisBinaries,
  startCluster,
  startRedisServer,
  tempDir,
  type RedisClusterProcesses,
  type RedisProcess,
} from '@parley/adapter-redis/testing';
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { LOAD_GENERATOR } from './load.js';
import { cpuTicks, cpuUsPerRequest, fixed, redisCpuUs } from './measure.js';

/** A load request: one per workspace, cycled over by every connection. */
interface LoadRequest {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}
interface LoadResult {
  ok: number;
  total: number;
  errors: number;
}

// Load-generator mode: autocannon in a process of its own, so that its CPU is its own.
if (process.argv[2] === '--autocannon') {
  const options = JSON.parse(process.argv[3]!) as {
    urls: string[];
    connections: number;
    duration: number;
    requests: LoadRequest[];
  };
  process.stdout.write('started\n');
  const result = await autocannon({
    url: options.urls as unknown as string,
    connections: options.connections,
    duration: options.duration,
    requests: options.requests,
  });
  process.stdout.write(
    `FLEET ${JSON.stringify({ ok: result['2xx'], total: result.requests.total, errors: result.non2xx + result.errors + result.timeouts })}\n`,
  );
  process.exit(0);
}

const SECONDS = Number(process.env.BENCH_FLEET_SECONDS ?? 10);
const INSTANCES = (process.env.BENCH_FLEET_INSTANCES ?? '1,2,4').split(',').map(Number);
const BACKENDS = (process.env.BENCH_FLEET_BACKENDS ?? 'redis,cluster,postgres').split(',');
const unknown = BACKENDS.filter((name) => !['redis', 'cluster', 'postgres'].includes(name));
if (unknown.length > 0)
  throw new Error(`BENCH_FLEET_BACKENDS: unknown ${unknown.join(', ')} (redis, cluster or postgres)`);
const CONNECTIONS = Number(process.env.BENCH_FLEET_CONNECTIONS ?? 64);
const WORKSPACES = 16;
const WARM_UP = 2;
const CORES = cpus().length;
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const PARLEY = join(dirname(createRequire(import.meta.url).resolve('@parley/http/package.json')), 'bin/parley.js');
const WRK = LOAD_GENERATOR === 'wrk';
const TICK_US = cpuUsPerRequest(1, 1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const message = JSON.stringify({
  role: 'user',
  content: 'Hello! I would like to know the status of my order, please.',
});

/** The receiver: answers 204 and keeps each webhook-id it saw (a redelivery counts once). */
const received = new Set<string>();
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received.add(String(request.headers['webhook-id']));
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;

/** Every process's [ppid, utime + stime, cutime + cstime] in ticks, from /proc. */
function processTable(): Map<number, [number, number, number]> {
  const table = new Map<number, [number, number, number]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), [
        Number(fields[1]),
        Number(fields[11]) + Number(fields[12]),
        Number(fields[13]) + Number(fields[14]),
      ]);
    } catch {
      // Gone meanwhile.
    }
  }
  return table;
}

/** CPU ticks of `root` and its descendants, the exited ones it waited for included (cutime/cstime). */
function treeTicks(root: number): number {
  const table = processTable();
  let ticks = table.get(root)?.[2] ?? 0;
  const found = [root];
  for (let i = 0; i < found.length; i += 1) {
    ticks += table.get(found[i]!)?.[1] ?? 0;
    for (const [pid, [parent]] of table) if (parent === found[i]) found.push(pid);
  }
  return ticks;
}

/** The whole machine's busy and total jiffies (/proc/stat), neighbours' work included. */
function machineJiffies(): [number, number] {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return [total - fields[3]! - fields[4]!, total];
}

/** This process's exited children (the load generators): cutime + cstime in ticks. */
const childrenTicks = () => processTable().get(process.pid)?.[2] ?? 0;

/** A store under test: what a row's servers get in their environment, and its cumulative usage. */
interface Backend {
  name: string;
  /** Environment of a row's servers on fresh storage. */
  prepare(row: string): Promise<Record<string, string>>;
  /** Cumulative CPU µs per process of the store, and commands (Redis) or statements (PostgreSQL) run. */
  usage(): Promise<{ processes: Array<{ name: string; us: number }>; commands: number }>;
  /** After a row: drops what `prepare` made (PostgreSQL). */
  finish(row: string): Promise<void>;
  stop(): Promise<void>;
}

/** Redis nodes' `INFO cpu` (µs) and `INFO commandstats` calls, `INFO` itself left out. */
function redisBackend(
  name: string,
  ports: number[],
  env: (prefix: string) => Record<string, string>,
  stop: () => Promise<void>,
): Backend {
  const clients = ports.map((port) => new Redis({ port, host: '127.0.0.1' }));
  return {
    name,
    prepare: async (row) => env(`fleet:${row}:${randomUUID().slice(0, 8)}:`),
    usage: async () => {
      const stats = await Promise.all(
        clients.map(async (client) => [await client.info('cpu'), await client.info('commandstats')] as const),
      );
      return {
        processes: stats.map(([info], i) => ({
          name: ports.length > 1 ? `redis shard ${i + 1}` : 'redis',
          us: redisCpuUs(info),
        })),
        commands: stats.reduce(
          (sum, [, info]) =>
            sum +
            [...info.matchAll(/^cmdstat_(\S+?):calls=(\d+)/gm)]
              .filter((match) => match[1] !== 'info')
              .reduce((s, match) => s + Number(match[2]), 0),
          0,
        ),
      };
    },
    finish: async () => {},
    stop: async () => {
      for (const client of clients) client.disconnect();
      await stop();
    },
  };
}

async function postgresBackend(server: PrivatePostgres): Promise<Backend> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  // The postmaster: the parent of this connection's backend.
  const backend = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const postmaster = processTable().get(backend)![0];
  const url = (database: string) => Object.assign(new URL(server.url), { pathname: `/${database}` }).toString();
  return {
    name: 'PostgreSQL',
    prepare: async (row) => {
      await admin.query(`CREATE DATABASE fleet_${row}`);
      return { DATABASE_URL: url(`fleet_${row}`) };
    },
    usage: async () => {
      const { rows } = await admin.query<{ calls: string | null }>(
        "SELECT sum(calls) AS calls FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'",
      );
      return {
        processes: [{ name: 'postgres', us: treeTicks(postmaster) * TICK_US }],
        commands: Number(rows[0]?.calls ?? 0),
      };
    },
    finish: async (row) => void (await admin.query(`DROP DATABASE IF EXISTS fleet_${row} WITH (FORCE)`)),
    stop: async () => {
      await admin.end().catch(() => {});
      await server.destroy();
    },
  };
}

/** The wrk script's folder, removed by {@link cleanUp}. */
const scratch = tempDir('fleet');
const children = new Set<ChildProcess>();
const backends: Backend[] = [];
let cleaning: Promise<void> | undefined;
/** Stops every process this run started and every private server; idempotent. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const backend of backends)
      await backend.stop().catch((error: unknown) => console.error(`stopping ${backend.name}:`, error));
    receiver.close();
    scratch.remove();
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

/** Spawns `command`, tracked for clean-up; its stdout lines go to `onLine`. */
function track(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onLine: (line: string) => void = () => {},
): ChildProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (buffered += chunk.toString()).split('\n');
    buffered = lines.pop()!;
    lines.forEach(onLine);
  });
  return child;
}
const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

/** Starts `parley serve` on a free port; resolves once /readyz answers 200. */
async function startInstance(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const base = { ...process.env };
  for (const name of [
    'REDIS_URL',
    'REDIS_CLUSTER_NODES',
    'REDIS_PREFIX',
    'DATABASE_URL',
    'DATA_DIR',
    'API_KEYS',
    'METRICS_PORT',
    'DELIVERY_WORKER',
  ])
    delete base[name];
  const child = track(process.execPath, [PARLEY, 'serve'], {
    ...base,
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`parley serve exited (${child.exitCode}) before it was ready`);
    if (Date.now() > deadline) throw new Error(`parley serve on port ${port} not ready after 60 s`);
    if (
      await fetch(`${url}/readyz`).then(
        (response) => response.ok,
        () => false,
      )
    )
      return { child, url };
  }
}

async function api(url: string, key: string, path: string, body: object): Promise<{ id: string }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string };
}

/** A Lua script for wrk: POSTs a message, cycling over `requests` from `args[1]`; prints its counts at the end. */
function wrkScript(requests: LoadRequest[]): string {
  const entries = requests
    .map((request) => `{ ${JSON.stringify(request.path)}, ${JSON.stringify(request.headers.authorization)} }`)
    .join(',\n  ');
  return `local list = {\n  ${entries}\n}
local prepared, n = {}, 0
function init(args)
  for i, entry in ipairs(list) do
    prepared[i] = wrk.format("POST", entry[1], { ["Authorization"] = entry[2], ["Content-Type"] = "application/json" }, ${JSON.stringify(message)})
  end
  n = tonumber(args[1] or "0") % #prepared
end
function request()
  n = n % #prepared + 1
  return prepared[n]
end
function done(summary)
  local e = summary.errors
  io.write(string.format('FLEET {"total":%d,"ok":%d,"errors":%d}\\n', summary.requests, summary.requests - e.status, e.status + e.connect + e.read + e.write + e.timeout))
end
`;
}

/** Drives `urls` for `seconds`; `onStart` runs when the load begins. Its CPU is this process's cutime growth. */
async function drive(
  urls: string[],
  requests: LoadRequest[],
  seconds: number,
  onStart: () => void,
): Promise<LoadResult> {
  const results: LoadResult[] = [];
  const onLine = (line: string) => {
    if (line === 'started') onStart();
    if (line.startsWith('FLEET ')) results.push(JSON.parse(line.slice(6)) as LoadResult);
  };
  const perUrl = Math.max(1, Math.ceil(CONNECTIONS / urls.length));
  let generators: ChildProcess[];
  if (WRK) {
    const script = join(scratch.dir, 'post.lua');
    writeFileSync(script, wrkScript(requests));
    generators = urls.map((url, i) =>
      track(
        'wrk',
        ['-t1', `-c${perUrl}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url, '--', String(i * 5)],
        process.env,
        onLine,
      ),
    );
    onStart();
    await Promise.all(generators.map(exited));
  } else {
    const options = { urls, connections: perUrl * urls.length, duration: seconds, requests };
    generators = [
      track(process.execPath, [here('fleet.js'), '--autocannon', JSON.stringify(options)], process.env, onLine),
    ];
    await Promise.all(generators.map(exited));
  }
  if (results.length !== generators.length)
    throw new Error(`${results.length} of ${generators.length} load generators reported`);
  return results.reduce((sum, result) => ({
    ok: sum.ok + result.ok,
    total: sum.total + result.total,
    errors: sum.errors + result.errors,
  }));
}

/** Resolves once `received` holds `count` deliveries, or after `ms`; whether it got there. */
async function drained(count: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; received.size < count; await sleep(20))
    if (Date.now() > deadline) return false;
  return true;
}

interface Snapshot {
  at: number;
  servers: number[];
  store: Awaited<ReturnType<Backend['usage']>>;
  generator: number;
  self: number;
  machine: [number, number];
}

async function snapshot(backend: Backend, servers: ChildProcess[]): Promise<Snapshot> {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    servers: servers.map((child) => cpuTicks(child.pid!) * TICK_US),
    store: await backend.usage(),
    generator: childrenTicks() * TICK_US,
    self: usage.user + usage.system,
    machine: machineJiffies(),
  };
}

/** One row: `count` instances on `backend`, warmed up, driven for SECONDS, backlog drained. */
async function row(backend: Backend, count: number): Promise<string> {
  const id = `${backend.name.replace(/\W/g, '').toLowerCase()}_${count}`;
  const keys = Array.from({ length: WORKSPACES }, (_, i) => ({
    key: `fleet-key-${i}-${randomUUID()}`,
    workspace: `fleet-${i}`,
    plan: 'enterprise',
    limitPerHour: 3_600_000,
  }));
  const env = { ...(await backend.prepare(id)), API_KEYS: JSON.stringify(keys) };
  const instances = [await startInstance(env)]; // the first applies PostgreSQL migrations alone
  instances.push(...(await Promise.all(Array.from({ length: count - 1 }, () => startInstance(env)))));
  try {
    const requests: LoadRequest[] = [];
    for (const { key } of keys) {
      const url = instances[0]!.url;
      const agent = await api(url, key, '/api/agents', {
        name: 'Fleet agent',
        description: 'A benchmark agent',
        model: 'modelA-4',
      });
      const conversation = await api(url, key, '/api/conversations', { agentId: agent.id });
      await api(url, key, '/api/webhooks', { url: receiverUrl, events: ['message.sent'] });
      requests.push({
        method: 'POST',
        path: `/api/conversations/${conversation.id}/messages`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: message,
      });
    }
    const urls = instances.map((instance) => instance.url);
    const servers = instances.map((instance) => instance.child);
    received.clear();
    const warm = await drive(urls, requests, WARM_UP, () => {});
    if (!(await drained(warm.ok, 120_000)))
      throw new Error(`warm-up: ${received.size} of ${warm.ok} deliveries arrived`);
    received.clear();
    let start: Promise<Snapshot> | undefined;
    const result = await drive(urls, requests, SECONDS, () => void (start ??= snapshot(backend, servers)));
    const end = await snapshot(backend, servers);
    const s0 = await start!;
    const inWindow = received.size;
    const complete = await drained(result.ok, Math.max(120_000, SECONDS * 20_000));
    const after = await snapshot(backend, servers);

    const windowUs = (end.at - s0.at) * 1000;
    const share = (us: number) => (us / windowUs) * 100;
    const perMessage = (us: number) => fixed(us / Math.max(result.ok, 1));
    const serverShares = servers.map((_, i) => share(end.servers[i]! - s0.servers[i]!));
    const storeShares = end.store.processes.map((process, i) => ({
      name: process.name,
      share: share(process.us - s0.store.processes[i]!.us),
    }));
    const candidates = [
      ...serverShares.map((value) => ({ name: 'servers', share: value })),
      ...storeShares,
      { name: 'load generator', share: share(end.generator - s0.generator) },
      { name: 'receiver (bench process)', share: share(end.self - s0.self) },
    ];
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const top = candidates.reduce((best, candidate) => (candidate.share > best.share ? candidate : best));
    const busiest =
      top.name === 'servers' ? `servers (busiest ${fixed(top.share)}%)` : `${top.name} ${fixed(top.share)}%`;
    // The machine: every core's busy time (this run's processes and any neighbour's), in % of one core.
    const machine = ((end.machine[0] - s0.machine[0]) / Math.max(end.machine[1] - s0.machine[1], 1)) * CORES * 100;
    const saturated = machine >= CORES * 90 ? `all ${CORES} cores; busiest: ${busiest}` : busiest;
    const shares = [
      `servers ${fixed(sum(serverShares))}`,
      ...storeShares.map((store) => `${store.name} ${fixed(store.share)}`),
      `load ${fixed(share(end.generator - s0.generator))}`,
      `receiver ${fixed(share(end.self - s0.self))}`,
    ].join(', ');
    const storeUs =
      sum(after.store.processes.map((process) => process.us)) - sum(s0.store.processes.map((process) => process.us));
    const drainS = (after.at - end.at) / 1000;
    return `| ${backend.name} | ${count} | ${fixed(result.ok / SECONDS)} | ${fixed(inWindow / ((end.at - s0.at) / 1000))} | ${complete ? `${fixed(drainS, 1)} s` : `⚠️ ${result.ok - received.size} left after ${fixed(drainS)} s`} | ${perMessage(sum(after.servers) - sum(s0.servers))} | ${perMessage(storeUs)} | ${fixed((after.store.commands - s0.store.commands) / Math.max(result.ok, 1), 1)} | ${shares} | ${fixed(machine)}% (this run ${fixed(sum(candidates.map((candidate) => candidate.share)))}%) | ${saturated} | ${result.errors ? `⚠️ ${result.errors}` : 0} |`;
  } finally {
    for (const { child } of instances) child.kill('SIGTERM');
    await Promise.race([Promise.all(instances.map(({ child }) => exited(child))), sleep(15_000)]);
    for (const { child } of instances) child.kill('SIGKILL');
    await backend.finish(id);
  }
}

const rows: string[] = [];
const started = Date.now();
try {
  const redisProblem = BACKENDS.some((name) => name === 'redis' || name === 'cluster')
    ? await probeRedisBinaries()
    : null;
  for (const name of BACKENDS) {
    if ((name === 'redis' || name === 'cluster') && redisProblem) {
      console.warn(`⚠️  ${redisProblem}: ${name} rows left out.`);
      continue;
    }
    let backend: Backend;
    if (name === 'redis') {
      const { dir, remove } = tempDir('fleet-redis');
      let server: RedisProcess;
      try {
        server = await startRedisServer(await freePort(), dir);
      } catch (error) {
        remove();
        throw error;
      }
      backend = redisBackend(
        'Redis',
        [server.port],
        (prefix) => ({ REDIS_URL: server.url, REDIS_PREFIX: prefix }),
        async () => (await server.kill(), remove()),
      );
    } else if (name === 'cluster') {
      const cluster: RedisClusterProcesses = await startCluster();
      const ports = cluster.nodes.map((node) => node.port);
      backend = redisBackend(
        'Redis Cluster (3 shards)',
        ports,
        (prefix) => ({ REDIS_CLUSTER_NODES: ports.map((port) => `127.0.0.1:${port}`).join(','), REDIS_PREFIX: prefix }),
        () => cluster.stop(),
      );
    } else {
      const problem = await probePostgresBinaries();
      if (problem) {
        console.warn(`⚠️  ${problem}: PostgreSQL rows left out.`);
        continue;
      }
      const server = await startPrivatePostgres({
        shared_preload_libraries: 'pg_stat_statements',
        max_connections: '200',
      });
      backend = await postgresBackend(server).catch(async (error: unknown) => {
        await server.destroy();
        throw error;
      });
    }
    backends.push(backend);
    for (const count of INSTANCES) {
      console.log(`${backend.name}, ${count} instance${count > 1 ? 's' : ''}…`);
      rows.push(await row(backend, count));
      console.log(rows.at(-1));
    }
    await backends.pop()!.stop();
  }

  const commit = execSync('git rev-parse --short HEAD', { cwd: here('.') })
    .toString()
    .trim();
  const report = [
    '# Fleet benchmark',
    '',
    `Generated by \`npm run bench:fleet\`: ${new Date().toISOString().slice(0, 10)}, commit ${commit}, Node ${process.version}, ${CORES} × ${cpus()[0]?.model ?? 'unknown CPU'}. ` +
      `Load: ${WRK ? 'wrk (one process per instance)' : 'autocannon (one child process)'}, ${CONNECTIONS} connections, ${SECONDS} s per row after a ${WARM_UP} s warm-up; ` +
      `${WORKSPACES} workspaces, one conversation and one webhook endpoint (message.sent) each. Took ${Math.round((Date.now() - started) / 1000)} s.`,
    '',
    `Every process — servers, store, load generator, receiver — shares these ${CORES} cores${INSTANCES.some((count) => count > CORES) ? `: ${Math.max(...INSTANCES)} instances oversubscribe them` : ''}; on a bigger machine each would have its own.`,
    '',
    '| backend | instances | messages/s | deliveries/s in window | backlog drained after | server CPU µs / message | store CPU µs / message | Redis commands or SQL statements / message | CPU, % of one core | machine busy | saturated | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Each instance is a `parley serve` with its delivery worker inside. CPU shares are of one core over the window: the servers summed, each Redis shard, PostgreSQL (all its processes), the load generator and the receiver (the bench process).',
    `"Machine busy" is every core's busy time over the window (/proc/stat: ${CORES * 100}% is all ${CORES} cores), neighbours included, and in brackets this run's processes' share of it; "saturated" names the busiest process (a server: the busiest instance), prefixed by "all cores" when the machine was ≥ 90 % busy.`,
    "Per-message costs run from the window's start until the backlog drained, each message's delivery included. Store CPU: redis-server (`INFO cpu`, summed over shards) or every PostgreSQL process (/proc). Commands: `INFO commandstats` calls (scripts' commands included, summed over shards); on PostgreSQL, statements from pg_stat_statements.",
  ].join('\n');
  console.log(`\n${report}\n`);
  writeFileSync(here('../FLEET.md'), `${report}\n`);
} finally {
  await cleanUp();
}
process.exit(0);
