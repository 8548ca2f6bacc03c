/**
 * @module Opening a PGlite data folder (`DATA_DIR`) for Parley: PostgreSQL's settings sized for
 * one embedded process, and a new folder's database created and migrated in a short-lived child
 * process so the server never holds the memory of those one-off steps: PGlite's heap never
 * shrinks, and a server that has only opened a new folder measured 126 – 130 MiB with the
 * migrations run in the child, 138 – 144 MiB with them run in its own PGlite
 * (docs/storage.md#embedded-mode-pglite, bench/PERFORMANCE-NOTES.md).
 */
import { PGlite } from '@electric-sql/pglite';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { DATA_DIR_MARK } from './data-dir-lock.js';
import { type Migration, migrationScript } from './migrate.js';
import type { PgliteDatabase, PgliteQueryable } from './sql.js';

/**
 * PostgreSQL's shared buffers on a data folder. PGlite keeps the server's default, 128 MB, and
 * PostgreSQL writes all of it when it starts, inside the WebAssembly heap, which never shrinks:
 * 128 MB of resident memory before the first query, and time at start-up spent filling it. The
 * folder's files are ordinary files, so pages that leave this cache are read back from the
 * operating system's page cache (a system call, no disk) rather than lost: 8 MB (1 024 pages)
 * holds the hot pages of a small team's data. 16 MB measured 8 MB more RSS, and a POST message
 * load no different beyond the noise of a shared machine (bench/PERFORMANCE-NOTES.md).
 */
export const PGLITE_SHARED_BUFFERS = '8MB';

/**
 * PGlite's start-up parameters for a data folder: PGlite's own defaults (`PGlite.defaultStartParams`,
 * the ones it documents for single-user mode) and {@link PGLITE_SHARED_BUFFERS}. Durability is
 * PGlite's: every statement's files are written through to the folder before it resolves (no
 * `relaxedDurability`), so an acknowledged write survives a kill -9 of the process.
 */
export const PGLITE_START_PARAMS: readonly string[] = [
  ...PGlite.defaultStartParams,
  '-c',
  `shared_buffers=${PGLITE_SHARED_BUFFERS}`,
];

/**
 * The V8 setting a data folder's PGlite is compiled with: WebAssembly compiled by V8's baseline
 * compiler (Liftoff) only. By default V8 compiles PGlite's 9 MB module twice, Liftoff then its
 * optimizing compiler (TurboFan) in the background for the functions that run often: about 60 MB
 * more resident memory, and on a 2-core machine the background compiles take CPU from the
 * statements themselves. PostgreSQL's statements here are short and spend their time in the file
 * system calls, so the optimized code does not pay for itself: in a probe (3 000 to 12 000
 * inserts and reads) Liftoff alone was as fast or faster. It applies to WebAssembly modules this
 * process compiles from then on (V8 has one setting per process), not to JavaScript.
 */
export const PGLITE_V8_FLAGS = '--liftoff-only';

/**
 * Creates a new data folder's database (PGlite's initdb) in a child process, applies `sql` there
 * in one transaction (the migrations: {@link migrationScript}), and waits for it to exit. In this
 * process initdb would hold a second WebAssembly instance and the initdb program (several hundred
 * MB that stay resident while the server runs), and the migrations' DDL grows the heap of the
 * server's own instance; in a child the memory goes back with the process. The child runs the same
 * PGlite as this package, and reads `sql` from stdin (too large for a command line).
 * @throws Error with the child's last lines of output when it fails
 */
async function createInChild(dataDir: string, sql: string): Promise<void> {
  const pglite = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = [
    'const { PGlite } = require(process.argv[1]);',
    '(async () => {',
    "  let sql = '';",
    "  process.stdin.setEncoding('utf8');",
    '  for await (const chunk of process.stdin) sql += chunk;',
    '  const db = new PGlite(process.argv[2], { startParams: JSON.parse(process.argv[3]) });',
    '  await db.waitReady;',
    '  await db.transaction((tx) => tx.exec(sql));',
    '  await db.close();',
    '})().catch((error) => { process.stderr.write(String(error && error.message)); process.exit(1); });',
  ].join('\n');
  const child = spawn(
    process.execPath,
    [PGLITE_V8_FLAGS, '-e', script, pglite, dataDir, JSON.stringify(PGLITE_START_PARAMS)],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  child.stdin!.on('error', () => {}); // a child that dies early: its exit reports the failure
  child.stdin!.end(sql);
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-2_000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode, signal) => resolve(signal ? null : exitCode));
  });
  if (code !== 0)
    throw new Error(
      `Creating and migrating the database in DATA_DIR ${dataDir} failed: ${output.trim() || `exit ${code ?? 'signal'}`}`,
    );
}

/** Opens `dataDir` once its database exists, creating and migrating it first (in a child) when it does not. */
async function openPglite(dataDir: string, schema: string, migrations?: Migration[]): Promise<PgliteDatabase> {
  if (!existsSync(join(dataDir, DATA_DIR_MARK))) await createInChild(dataDir, migrationScript(schema, migrations));
  setFlagsFromString(PGLITE_V8_FLAGS);
  const db = new PGlite(dataDir, { startParams: [...PGLITE_START_PARAMS] });
  await db.waitReady;
  return db;
}

/**
 * A PGlite instance on a data folder that is still being opened: every call waits for it, and
 * fails with the opening's error when the folder could not be opened.
 */
class OpeningPglite implements PgliteDatabase {
  #db: PgliteDatabase | undefined;
  readonly #opening: Promise<PgliteDatabase>;

  constructor(opening: Promise<PgliteDatabase>) {
    this.#opening = opening.then((db) => (this.#db = db));
    this.#opening.catch(() => {}); // surfaced by the first call
  }

  get closed(): boolean {
    return this.#db?.closed ?? false;
  }

  async query<R>(text: string, params?: unknown[], options?: Parameters<PgliteQueryable['query']>[2]) {
    return (await this.#opening).query<R>(text, params, options);
  }

  async exec(script: string): Promise<unknown> {
    return (await this.#opening).exec(script);
  }

  async transaction<T>(work: (tx: PgliteQueryable) => Promise<T>): Promise<T> {
    return (await this.#opening).transaction(work);
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const unlisten = await (await this.#opening).listen(channel, onPayload);
    return () => unlisten();
  }

  async close(): Promise<void> {
    const db = await this.#opening.catch(() => undefined);
    if (db && !db.closed) await db.close();
  }
}

/**
 * PGlite on the data folder `dataDir` (which the caller has locked), with
 * {@link PGLITE_START_PARAMS}; a new folder's database is created in a child process first, and
 * `migrations` (default: this package's) applied there to `schema`, so the caller's `migrate()`
 * finds it current (an existing folder is left to that `migrate()`). Returns at once: calls wait
 * until the database is open.
 */
export function openDataDir(dataDir: string, schema: string, migrations?: Migration[]): PgliteDatabase {
  return new OpeningPglite(openPglite(dataDir, schema, migrations));
}
