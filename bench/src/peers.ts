/**
 * @module `npm run bench:peers`: Parley next to a peer product, Mastra, in the same run.
 *
 * Installs Mastra (`@mastra/core` with in-memory LibSQL storage, `@mastra/memory`, served by its
 * own Hono adapter `@mastra/hono` on `@hono/node-server` — the documented way to run Mastra's HTTP
 * API inside a Node server, and the same framework Parley uses) into a temporary folder, never
 * into this repository, then starts it and Parley's ready-made server on memory storage. For
 * each it measures saving one message (`POST /api/memory/save-messages` /
 * `POST /api/conversations/:id/messages`) and reading a 50-message page of a 100-message thread
 * (`GET /api/memory/threads/:id/messages?perPage=50` / `GET /api/conversations/:id/messages?limit=50`):
 * server CPU µs per request (the server process's own CPU time over the window, from /proc),
 * req/s and p50/p99, 50 connections, medians of 3 interleaved rounds. Mastra runs without
 * authentication or rate limits; Parley with both. Writes the table to bench/PEERS.md.
 *
 * Environment: `BENCH_SECONDS` per measurement (2). The Mastra packages are pinned to versions
 * that agree on their `@mastra/core` peer (npm does not find such a set by itself).
 */
import autocannon from 'autocannon';
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTicks, cpuUsPerRequest, fixed, medianFigures, type Figures } from './measure.js';
import { writePerformanceDoc } from './performance-doc.js';

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const MASTRA_PACKAGES = [
  '@mastra/core@1.71.0',
  '@mastra/libsql@1.23.1',
  '@mastra/memory@1.31.0',
  '@mastra/hono@1.7.9',
  'hono@4',
  '@hono/node-server@2',
];
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const MASTRA_SERVER = `
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { Mastra } from '@mastra/core/mastra';
import { Agent } from '@mastra/core/agent';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { MastraServer } from '@mastra/hono';

// The model is never called: only the memory routes are measured.
const agent = new Agent({ id: 'support', name: 'support', instructions: 'You answer order questions.', model: 'openai/gpt-4o-mini', memory: new Memory() });
const mastra = new Mastra({ agents: { support: agent }, storage: new LibSQLStore({ id: 'bench', url: ':memory:' }), logger: false });
const app = new Hono();
await new MastraServer({ app, mastra }).init();
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write(JSON.stringify({ port: info.port }) + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

/** Spawns `script` and resolves with the first JSON line it prints that has a `port`. */
function start(
  script: string,
  env: Record<string, string>,
  cwd?: string,
): Promise<{ child: ChildProcess; info: Record<string, any> }> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(cwd && { cwd }),
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.on('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((candidate) => candidate.startsWith('{"port"'));
      if (!line) return;
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      child.removeAllListeners('exit');
      resolve({ child, info: JSON.parse(line) });
    });
  });
}

interface Scenario {
  server: 'Mastra' | 'Parley memory';
  name: 'save one message' | 'history (50 of 100)';
  options: autocannon.Options;
}

async function measure(pid: number, scenario: Scenario): Promise<Figures> {
  await autocannon({ ...scenario.options, duration: 1 });
  const before = cpuTicks(pid);
  const result = await autocannon({ ...scenario.options, duration: SECONDS });
  const ticks = cpuTicks(pid) - before;
  return {
    cpuUs: cpuUsPerRequest(ticks, result.requests.total),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

const started = Date.now();
const folder = mkdtempSync(join(tmpdir(), 'parley-bench-mastra-'));
const children: ChildProcess[] = [];
try {
  console.log(`Installing ${MASTRA_PACKAGES.join(' ')} into ${folder}…`);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'mastra-bench', private: true, type: 'module' }));
  writeFileSync(join(folder, 'server.mjs'), MASTRA_SERVER);
  execSync(`npm install --no-audit --no-fund --loglevel=error ${MASTRA_PACKAGES.join(' ')}`, {
    cwd: folder,
    stdio: 'inherit',
  });
  const mastraVersion = JSON.parse(readFileSync(join(folder, 'node_modules/@mastra/core/package.json'), 'utf8'))
    .version as string;

  const mastra = await start(join(folder, 'server.mjs'), {}, folder);
  const parley = await start(here('targets/parley.js'), { LOG_LEVEL: 'warn', BENCH_LARGE: '0' });
  children.push(mastra.child, parley.child);

  const mastraUrl = `http://127.0.0.1:${mastra.info.port}/api/memory`;
  const json = { 'content-type': 'application/json' };
  const post = (url: string, body: unknown) =>
    fetch(url, { method: 'POST', headers: json, body: JSON.stringify(body) }).then(async (response) => {
      if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
    });
  const say = (i: number) => ({
    threadId: 'thread-history',
    resourceId: 'user-1',
    role: i % 2 ? 'assistant' : 'user',
    type: 'text',
    content: `Benchmark message number ${i}, of a typical length for a chat.`,
  });
  for (const threadId of ['thread-history', 'thread-append'])
    await post(`${mastraUrl}/threads?agentId=support`, { resourceId: 'user-1', title: 'bench', threadId });
  for (let i = 0; i < 100; i += 1) await post(`${mastraUrl}/save-messages?agentId=support`, { messages: [say(i)] });

  const message = { role: 'user', content: 'Hello! I would like to know the status of my order, please.' };
  const parleyUrl = `http://127.0.0.1:${parley.info.port}/api/conversations`;
  const auth = { authorization: `Bearer ${parley.info.key}` };
  const connections = 50;
  const scenarios: Scenario[] = [
    {
      server: 'Mastra',
      name: 'save one message',
      options: {
        url: `${mastraUrl}/save-messages?agentId=support`,
        method: 'POST',
        connections,
        headers: json,
        body: JSON.stringify({ messages: [{ ...say(0), threadId: 'thread-append', content: message.content }] }),
      },
    },
    {
      server: 'Mastra',
      name: 'history (50 of 100)',
      options: { url: `${mastraUrl}/threads/thread-history/messages?agentId=support&perPage=50`, connections },
    },
    {
      server: 'Parley memory',
      name: 'save one message',
      options: {
        url: `${parleyUrl}/${parley.info.conversations.append}/messages`,
        method: 'POST',
        connections,
        headers: { ...auth, ...json },
        body: JSON.stringify(message),
      },
    },
    {
      server: 'Parley memory',
      name: 'history (50 of 100)',
      options: { url: `${parleyUrl}/${parley.info.conversations.small}/messages?limit=50`, connections, headers: auth },
    },
  ];
  const pids = { Mastra: mastra.child.pid!, 'Parley memory': parley.child.pid! };
  const samples = new Map(scenarios.map((scenario) => [scenario, [] as Figures[]]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    console.log(`Round ${round} of ${ROUNDS}…`);
    for (const scenario of scenarios) samples.get(scenario)!.push(await measure(pids[scenario.server], scenario));
  }

  const figures = new Map([...samples].map(([scenario, runs]) => [scenario, medianFigures(runs)]));
  const parleyOf = (scenario: Scenario) =>
    scenarios.find((other) => other.server === 'Parley memory' && other.name === scenario.name)!;
  const rows = scenarios.map((scenario) => {
    const f = figures.get(scenario)!;
    const versus = f.cpuUs / figures.get(parleyOf(scenario))!.cpuUs;
    return `| ${scenario.server} | ${scenario.name} | **${fixed(f.cpuUs)}** | ${versus.toFixed(2)} × | ${fixed(f.rps)} | ${fixed(f.p50, 1)} | ${fixed(f.p99, 1)} |${f.errors ? ` ⚠️ ${f.errors} errors` : ''}`;
  });
  const commit = execSync('git rev-parse --short HEAD', { cwd: here('.') })
    .toString()
    .trim();
  const report = [
    '# Parley and Mastra, side by side',
    '',
    `${new Date().toISOString().slice(0, 10)}, commit ${commit}, Mastra ${mastraVersion} (\`@mastra/hono\`, LibSQL \`:memory:\`), Node ${process.version}, ` +
      `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}. ${ROUNDS} interleaved rounds of ${SECONDS} s, ${connections} connections (autocannon), medians. ` +
      `Took ${Math.round((Date.now() - started) / 1000)} s, the install included.`,
    '',
    '| server | route | server CPU µs / request | CPU vs Parley | req/s | p50 ms | p99 ms |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Parley runs with every feature on (bearer auth, rate limits, request ids, the event log and outbox, the delivery worker); Mastra without authentication.',
  ].join('\n');
  console.log(`\n${report}\n`);
  writeFileSync(here('../PEERS.md'), `${report}\n`);
  writePerformanceDoc(); // docs/performance.md shows what this run wrote
} finally {
  for (const child of children) child.kill('SIGTERM');
  rmSync(folder, { recursive: true, force: true });
}
process.exit(0);
