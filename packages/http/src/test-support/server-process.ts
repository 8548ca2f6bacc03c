/** @module Test helper: the built `parley serve` as a child process on a free port. Not built. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sample } from './prometheus.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const cli = fileURLToPath(new URL('../../dist/cli/cli.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A running server process. `output()` is its stdout so far; `stderr()` its stderr. */
export interface ServerProcess {
  child: ChildProcess;
  base: string;
  output(): string;
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** This process's environment without the server's own variables (storage, keys, delivery), so tests set them explicitly. */
function inheritedEnv(): Record<string, string | undefined> {
  const {
    API_KEYS: _keys,
    REDIS_URL: _url,
    REDIS_CLUSTER_NODES: _nodes,
    REDIS_PREFIX: _prefix,
    RATE_LIMIT_FAILURE: _failure,
    DELIVERY_WORKER: _worker,
    WEBHOOK_RETRY_DELAYS: _delays,
    WEBHOOK_ALLOW_PRIVATE_URLS: _private,
    EVENT_RETENTION_DAYS: _retention,
    DATABASE_URL: _database,
    DATA_DIR: _dataDir,
    DATABASE_MIGRATE: _migrate,
    PARLEY_SCHEMA: _schema,
    DATABASE_LISTEN_URL: _listen,
    ...rest
  } = process.env;
  return rest;
}

function assertBuilt(): void {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm test\`, which builds before testing.`);
}

/**
 * Spawns the built `parley <args…>` with `env` on top of this process's environment minus the
 * server's variables, stdout and stderr piped: what {@link startServerProcess} starts, for tests
 * that act on the process before it is up.
 */
export function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  assertBuilt();
  return spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env: { ...inheritedEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** How a server that exited before listening says its store did not answer in time (see below). */
const STORE_TOO_SLOW_AT_START =
  /before listening[\s\S]*(did not answer within|timeout exceeded when trying to connect)/;

/**
 * Spawns `node packages/http/dist/cli/cli.js serve` (built by `npm test` before vitest runs) with
 * `env` on top of this process's environment minus the server's variables (`API_KEYS`,
 * `REDIS_*`, `RATE_LIMIT_FAILURE`), and resolves once it prints that it is listening. With
 * `command: 'worker'` it runs `parley worker` instead and resolves once that says it runs
 * (`base` is then unused). `args` follow the command (`--port 4000`). `startTimeoutMs` (default
 * 15 000) bounds the wait, e.g. longer for a first PGlite start, which creates its database.
 *
 * A server that exits before listening because its store did not answer in time is started once
 * more: on a loaded test machine the shared Redis can miss its 500 ms deadline at start-up, and the
 * shared PostgreSQL the pool's 1 s to connect ("timeout exceeded when trying to connect"), which
 * is not what the tests using this are about (start-up refusals are tested with {@link runCli}).
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  command: 'serve' | 'worker' = 'serve',
  args: string[] = [],
  options: { startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  try {
    return await startOnce(env, command, args, options);
  } catch (error) {
    if (!(error instanceof Error && STORE_TOO_SLOW_AT_START.test(error.message))) throw error;
    return await startOnce(env, command, args, options);
  }
}

async function startOnce(
  env: Record<string, string>,
  command: 'serve' | 'worker',
  args: string[],
  { startTimeoutMs = 15_000 }: { startTimeoutMs?: number },
): Promise<ServerProcess> {
  const port = await freePort();
  const ready = command === 'serve' ? /Parley is listening on[\s\S]*\n\n/ : /Parley worker is running[\s\S]*\n\n/;
  const child = spawnCli([command, ...args], { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} did not start within ${startTimeoutMs} ms:\n${stdout}${stderr}`)),
      startTimeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      // The banner is one write ending in a blank line; wait for all of it (it may carry the key).
      if (ready.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening:\n${stdout}${stderr}`)));
  });
  const stop = (signal: NodeJS.Signals = 'SIGTERM') =>
    new Promise<number | null>((resolve) => {
      // Already gone (exited, or killed by a signal: then exitCode stays null).
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill(signal);
    });
  return { child, base: `http://127.0.0.1:${port}`, output: () => stdout, stderr: () => stderr, stop };
}

/**
 * Starts one server per entry of `envs` at once (as {@link startServerProcess}) and resolves with
 * them in the same order. When one fails to start, the ones that did are killed before the error
 * is rethrown, so no process outlives a failed `beforeAll`.
 */
export async function startServerProcesses(envs: Record<string, string>[]): Promise<ServerProcess[]> {
  const results = await Promise.allSettled(envs.map((env) => startServerProcess(env)));
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed === undefined) return started;
  await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
  throw failed.reason;
}

/** The Prometheus page of a server started with `METRICS_PORT: '0'` (the address its banner printed). */
export async function metricsPage(instance: ServerProcess): Promise<string> {
  const url = /Prometheus metrics: (\S+)/.exec(instance.output())?.[1];
  if (url === undefined) throw new Error('The server has no metrics listener: start it with METRICS_PORT: "0".');
  return (await fetch(url)).text();
}

/**
 * How many reply requests of `outcome` (`paused`, …) a server started with `METRICS_PORT: '0'`
 * counted in `parley_replies_total`. A reply request is counted once its worker has acknowledged
 * it: a test that kills a process on seeing a reply paused (the pending tool call is stored a
 * round trip before the acknowledgement) waits for `paused` here first, or the dead worker's
 * lease keeps the conversation from every other worker for its 30 s.
 */
export async function repliesCounted(instance: ServerProcess, outcome: string): Promise<number> {
  return sample(await metricsPage(instance), 'parley_replies_total', { outcome }) ?? 0;
}

/** What a finished `parley` command printed, and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `parley <args…>` with `env` (as for {@link startServerProcess}) to completion. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<CliResult> {
  assertBuilt();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { cwd: root, env: { ...inheritedEnv(), ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
