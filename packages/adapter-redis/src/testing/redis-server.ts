/**
 * @module Test support: private `redis-server` processes (a single server, or a 3-master Redis
 * Cluster) on free ports, torn down — processes killed, temporary directories removed — by
 * `stop()`, which callers run in `afterAll` so it happens on failure too.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `null` when `redis-server` and `redis-cli` can be run, else why not. */
export async function probeRedisBinaries(): Promise<string | null> {
  try {
    await run('redis-server', ['--version']);
    await run('redis-cli', ['--version']);
    return null;
  } catch (error) {
    return `redis-server/redis-cli not runnable: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free TCP port (10 000–22 766) whose Cluster bus port (port + 10 000) is free too. Both sit below
 * the kernel's ephemeral range (Linux: 32 768 and up; macOS: 49 152 and up), because a test often
 * holds its port unbound for a while (Redis stopped for an outage, a webhook receiver not up yet):
 * an ephemeral port can be handed to any outgoing connection in that time, and the later listen then
 * fails with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * 12_767);
    if ((await listenable(port)) && (await listenable(port + 10_000))) return port;
  }
  throw new Error('No free port pair found.');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `redis-cli -p port <command…>` until `accept(output)`, or throws after `timeoutMs`. */
export async function waitFor(
  port: number,
  command: string[],
  accept: (output: string) => boolean,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      last = (await run('redis-cli', ['-p', String(port), ...command])).stdout;
      if (accept(last)) return;
    } catch (error) {
      last = String(error);
    }
    await sleep(100);
  }
  throw new Error(
    `redis on port ${port}: '${command.join(' ')}' not ready after ${timeoutMs} ms (last: ${last.trim()})`,
  );
}

/** A running private redis-server. */
export interface RedisProcess {
  port: number;
  url: string;
  /** SIGKILLs the process (no graceful shutdown: an outage) and waits for it to exit. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its connections open but stops answering (a hang). */
  pause(): void;
  resume(): void;
}

/** Starts `redis-server` on `port` (no persistence) with `extra` arguments; resolves once it answers PING. */
export async function startRedisServer(port: number, dir: string, extra: string[] = []): Promise<RedisProcess> {
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      ...extra,
    ],
    { stdio: 'ignore' },
  );
  // If the test process dies without running its teardown, do not leave the server behind.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', orphanGuard);
      resolve();
    }),
  );
  child.once('error', () => {});
  await waitFor(port, ['ping'], (output) => output.includes('PONG'));
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
  };
}

/** A temporary directory for private servers, and what removes it. */
export function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `parley-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A private Redis Cluster of three masters. */
export interface RedisClusterProcesses {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/**
 * Starts three cluster-enabled servers, joins them with `redis-cli --cluster create`, and waits
 * until every node reports `cluster_state:ok`. On any failure it tears down what it started.
 */
export async function startCluster(): Promise<RedisClusterProcesses> {
  const { dir, remove } = tempDir('cluster');
  const servers: RedisProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.kill()));
    remove();
  };
  try {
    for (let i = 0; i < 3; i += 1) {
      const port = await freePort();
      servers.push(
        await startRedisServer(port, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
        ]),
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-yes',
    ]);
    for (const server of servers)
      await waitFor(server.port, ['cluster', 'info'], (output) => output.includes('cluster_state:ok'));
    return { nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
