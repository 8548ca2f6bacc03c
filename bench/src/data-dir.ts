/**
 * @module `npm run bench:data-dir`: memory and start-up of `parley serve` on `DATA_DIR` (embedded
 * PostgreSQL, PGlite, in a folder), issue 43 item 4. On a fresh temporary folder it measures:
 * - **first start**: spawn to `/readyz` 200 (the database created in the folder, migrations);
 * - **idle RSS** (VmRSS of /proc/<pid>/status) once an agent, a conversation and some messages
 *   were written over HTTP and the server has been idle a few seconds;
 * - **second start**: the same folder after a SIGTERM, spawn to `/readyz` 200 (median of
 *   `BENCH_RESTARTS`, default 3), and the idle RSS after a few requests again;
 * - a short POST message load (wrk when installed, else autocannon: `load.ts`) on that server and
 *   on a memory server (no `DATA_DIR`): msg/s and p99, with the ratio to memory;
 * and prints a markdown table against the targets (idle RSS ≤ 200 MB, restart ≤ 5 s). The folder
 * is removed at the end, on failure and on SIGINT too. `BENCH_SECONDS` (default 5) is the load's
 * length, `BENCH_CONNECTIONS` (default 10) its connections, `BENCH_IDLE_MS` (default 3 000) the
 * idle wait before RSS is read.
 */
import { freePort, tempDir } from '@parley/adapter-redis/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LOAD_GENERATOR, runLoad, type LoadResult } from './load.js';
import { fixed, median } from './measure.js';

const PARLEY = join(dirname(createRequire(import.meta.url).resolve('@parley/http/package.json')), 'bin/parley.js');
const KEY = 'bench-data-dir-key-0123456789abcdef';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const RESTARTS = Math.max(1, Number(process.env.BENCH_RESTARTS ?? 3));
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 3_000);
/** Messages written before the first idle reading. */
const MESSAGES = 50;
const MiB = 1024 * 1024;
const TARGET_RSS_MIB = 200;
const TARGET_RESTART_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A line of /proc/<pid>/status in bytes (`VmRSS`, `VmHWM`: kB there). */
function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? NaN) * 1024;
}

const scratch = tempDir('bench-data-dir');
const dataDir = join(scratch.dir, 'data');
const children = new Set<ChildProcess>();
let cleaning: Promise<void> | undefined;
/** Kills what this run started and removes its folder; idempotent. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of children) {
      child.kill('SIGKILL');
      await exited(child);
    }
    scratch.remove();
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

interface Server {
  child: ChildProcess;
  url: string;
  /** Spawn to the first `/readyz` 200, in ms. */
  readyMs: number;
}

/** Spawns `parley serve` with `env` on a free port; resolves once `/readyz` answers 200. */
async function start(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const base = { ...process.env };
  for (const name of ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'DATABASE_URL', 'DATA_DIR', 'METRICS_PORT'])
    delete base[name];
  const started = performance.now();
  const child = spawn(process.execPath, [PARLEY, 'serve'], {
    env: {
      ...base,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      // The largest limit a plan may have: the load measures admitted requests.
      API_KEYS: JSON.stringify([{ key: KEY, workspace: 'bench', plan: 'enterprise', limitPerHour: 3_600_000 }]),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 120_000; ; await sleep(10)) {
    if (child.exitCode !== null) throw new Error(`parley serve exited (${child.exitCode}) before it was ready`);
    if (Date.now() > deadline) throw new Error('parley serve not ready after 120 s');
    const ok = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return { child, url, readyMs: performance.now() - started };
  }
}

/** SIGTERM, then waits for the exit. */
async function stop(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  await exited(server.child);
}

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

async function api(url: string, method: 'GET' | 'POST', path: string, body?: object): Promise<{ id: string }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string };
}

const message = (i: number) => ({ role: 'user', content: `Benchmark message number ${i}, of a typical length.` });

/** An agent, a conversation with `MESSAGES` messages: resolves with the conversation's id. */
async function seed(url: string): Promise<string> {
  const agent = await api(url, 'POST', '/api/agents', {
    name: 'Data-dir agent',
    description: 'A benchmark agent',
    model: 'modelA-4',
  });
  const conversation = await api(url, 'POST', '/api/conversations', { agentId: agent.id });
  for (let i = 0; i < MESSAGES; i += 1)
    await api(url, 'POST', `/api/conversations/${conversation.id}/messages`, message(i));
  return conversation.id;
}

/** A few requests on an existing conversation (read it, its history, append one), as after a restart. */
async function touch(url: string, conversationId: string): Promise<void> {
  await api(url, 'GET', `/api/conversations/${conversationId}`);
  await api(url, 'GET', `/api/conversations/${conversationId}/messages?limit=50`);
  await api(url, 'POST', `/api/conversations/${conversationId}/messages`, message(-1));
}

/** RSS after `IDLE_MS` without requests. */
async function idleRss(server: Server): Promise<number> {
  await sleep(IDLE_MS);
  return status(server.child.pid!, 'VmRSS');
}

/** One second of warm-up, then the measured POST message load. */
async function load(url: string, conversationId: string): Promise<LoadResult> {
  const options = {
    url: `${url}/api/conversations/${conversationId}/messages`,
    method: 'POST' as const,
    headers,
    body: JSON.stringify(message(0)),
    connections: CONNECTIONS,
  };
  await runLoad({ ...options, seconds: 1 });
  return runLoad({ ...options, seconds: SECONDS });
}

const mib = (bytes: number) => fixed(bytes / MiB, 1);
const seconds = (ms: number) => fixed(ms / 1000, 2);

try {
  console.error(
    `parley serve on DATA_DIR (${dataDir}); load: ${LOAD_GENERATOR}, ${CONNECTIONS} connections, ${SECONDS} s`,
  );
  const first = await start({ DATA_DIR: dataDir });
  const conversationId = await seed(first.url);
  const firstRss = await idleRss(first);
  await stop(first);

  const restarts: number[] = [];
  let server: Server | undefined;
  for (let i = 0; i < RESTARTS; i += 1) {
    if (server) await stop(server);
    server = await start({ DATA_DIR: dataDir });
    restarts.push(server.readyMs);
  }
  await touch(server!.url, conversationId);
  const secondRss = await idleRss(server!);
  const dataDirLoad = await load(server!.url, conversationId);
  const afterLoadRss = await idleRss(server!);
  const peakRss = status(server!.child.pid!, 'VmHWM');
  await stop(server!);

  const memory = await start({});
  const memoryConversation = await seed(memory.url);
  const memoryRss = await idleRss(memory);
  const memoryLoad = await load(memory.url, memoryConversation);
  await stop(memory);

  const verdict = (met: boolean) => (met ? 'met' : 'missed');
  const restartMs = median(restarts);
  console.log(
    [
      `## parley serve on DATA_DIR (PGlite) — ${new Date().toISOString().slice(0, 10)}`,
      '',
      '| | DATA_DIR | memory | ratio | target |',
      '| --- | ---: | ---: | ---: | --- |',
      `| first start, spawn to /readyz 200 (fresh folder) | ${seconds(first.readyMs)} s | ${seconds(memory.readyMs)} s | ${fixed(first.readyMs / memory.readyMs, 1)} × | |`,
      `| second start, same folder (median of ${RESTARTS}: ${restarts.map(seconds).join(', ')} s) | ${seconds(restartMs)} s | | | ≤ 5 s: ${verdict(restartMs <= TARGET_RESTART_MS)} |`,
      `| idle RSS after first start and ${MESSAGES + 2} writes | ${mib(firstRss)} MiB | ${mib(memoryRss)} MiB | ${fixed(firstRss / memoryRss, 1)} × | ≤ ${TARGET_RSS_MIB} MB: ${verdict(firstRss <= TARGET_RSS_MIB * 1e6)} |`,
      `| idle RSS after second start and 3 requests | ${mib(secondRss)} MiB | | | ≤ ${TARGET_RSS_MIB} MB: ${verdict(secondRss <= TARGET_RSS_MIB * 1e6)} |`,
      `| idle RSS after the load (peak VmHWM) | ${mib(afterLoadRss)} MiB (${mib(peakRss)}) | | | |`,
      `| POST message, msg/s (${CONNECTIONS} connections, ${SECONDS} s) | ${fixed(dataDirLoad.rps)} | ${fixed(memoryLoad.rps)} | ${fixed(dataDirLoad.rps / memoryLoad.rps, 2)} × | |`,
      `| POST message, p99 | ${fixed(dataDirLoad.p99, 1)} ms | ${fixed(memoryLoad.p99, 1)} ms | ${fixed(dataDirLoad.p99 / memoryLoad.p99, 1)} × | |`,
      `| POST message, failed | ${dataDirLoad.errors} | ${memoryLoad.errors} | | |`,
    ].join('\n'),
  );
} finally {
  await cleanUp();
}
