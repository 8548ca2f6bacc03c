/**
 * @module Test support: a private PostgreSQL server (initdb into a temporary folder, `postgres` on
 * a free port) that a test may stop, start again and pause (SIGSTOP every process of it) without
 * touching the shared server other tests use. As root, the server runs as the `postgres` user.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The user a root process runs PostgreSQL as (initdb refuses root). */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/** `null` when `initdb` and `postgres` can be run here, else why not. */
export async function probePostgresBinaries(): Promise<string | null> {
  try {
    await run('initdb', ['--version']);
    await run('postgres', ['--version']);
    await serverUser();
    return null;
  } catch (error) {
    return `initdb/postgres not runnable: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A private server: its URL (database `postgres`, user `postgres`, trust), and what a test does to it. */
export interface PrivatePostgres {
  url: string;
  /** Fast shutdown (SIGINT), then resolves once the server exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder; resolves once it answers. */
  start(): Promise<void>;
  /** SIGSTOP (`true`) or SIGCONT (`false`) to the server and every process it forked. */
  pause(paused: boolean): void;
  /** Stops it for good (SIGKILL when needed) and removes its folder. */
  destroy(): Promise<void>;
}

/**
 * initdb into a temporary folder and start the server; `destroy()` in `afterAll`. `settings` are
 * extra server settings (`{ shared_preload_libraries: 'pg_stat_statements' }`, say).
 */
export async function startPrivatePostgres(settings: Record<string, string> = {}): Promise<PrivatePostgres> {
  const user = await serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'parley-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
    ...(user && { uid: user.uid, gid: user.gid }),
  });
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let server: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const options = { listen_addresses: '127.0.0.1', fsync: 'off', autovacuum: 'off', ...settings };
    const child = spawn(
      'postgres',
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        ...Object.entries(options).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      {
        stdio: 'ignore',
        ...(user && { uid: user.uid, gid: user.gid }),
      },
    );
    server = child;
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
    for (const deadline = Date.now() + 15_000; ;) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  };
  const stop = async () => {
    server?.kill('SIGINT');
    await exited;
  };
  /** The server and its descendants, read from /proc (Linux). */
  const processes = (): number[] => {
    const root = server?.pid;
    if (root === undefined) return [];
    const parents = new Map<number, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // Gone meanwhile.
      }
    }
    const found = [root];
    for (let i = 0; i < found.length; i += 1)
      for (const [pid, parent] of parents) if (parent === found[i]) found.push(pid);
    return found;
  };

  await start();
  return {
    url,
    stop,
    start,
    pause: (paused) => {
      const signal = paused ? 'SIGSTOP' : 'SIGCONT';
      // The postmaster first, so it forks no backend after the scan; then every process found,
      // scanning again until a scan finds none new (a backend forked while the postmaster was
      // being stopped would otherwise keep answering).
      const signalled = new Set<number>();
      for (let found = processes(); found.some((pid) => !signalled.has(pid)); found = processes()) {
        for (const pid of found) {
          if (signalled.has(pid)) continue;
          signalled.add(pid);
          try {
            process.kill(pid, signal);
          } catch {
            // Exited meanwhile.
          }
        }
      }
    },
    destroy: async () => {
      for (const pid of processes()) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Exited meanwhile.
        }
      }
      server?.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
