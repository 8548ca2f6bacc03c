/** @module Test helper: the built `parley serve` as a child process on a free port. Not built. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

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
 * Spawns `node packages/http/dist/cli/cli.js serve` (built by `npm test` before vitest runs) with
 * `env` on top of this process's environment minus the server's variables (`API_KEYS`,
 * `REDIS_*`, `RATE_LIMIT_FAILURE`), and resolves once it prints that it is listening. With
 * `command: 'worker'` it runs `parley worker` instead and resolves once that says it runs
 * (`base` is then unused). `args` follow the command (`--port 4000`). `startTimeoutMs` (default
 * 15 000) bounds the wait, e.g. longer for a first PGlite start, which creates its database.
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  command: 'serve' | 'worker' = 'serve',
  args: string[] = [],
  { startTimeoutMs = 15_000 }: { startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  assertBuilt();
  const port = await freePort();
  const ready = command === 'serve' ? /Parley is listening on[\s\S]*\n\n/ : /Parley worker is running[\s\S]*\n\n/;
  const child = spawn(process.execPath, [cli, command, ...args], {
    cwd: root,
    env: { ...inheritedEnv(), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
