/**
 * @module Test support: a throwaway PostgreSQL database per test run on the shared server, a
 * PGlite instance in memory or in a temporary folder, and the rule for when PostgreSQL is not
 * answering (fail under `CI=true`, skip loudly elsewhere). Tests never mock the database.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { PgliteDatabase } from '../sql.js';

/** The shared server's maintenance database: `PARLEY_TEST_DATABASE_URL`, or the local default. */
export const POSTGRES_ADMIN_URL = process.env.PARLEY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `null` when PostgreSQL at `url` answers `SELECT 1` within 2 s, else why not. */
export async function probePostgres(url: string = POSTGRES_ADMIN_URL): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    const cause = error instanceof AggregateError ? error.errors[0] : error;
    return cause instanceof Error ? cause.message || (cause as { code?: string }).code || String(cause) : String(cause);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The part of a test runner {@link describeIfPostgres} needs (vitest's, jest's, …). */
export interface SuiteRunner<Describe extends { skip: unknown }> {
  describe: Describe;
  it: (name: string, body: () => void) => unknown;
}

/**
 * `t.describe` when `problem` is `null`; otherwise, under CI, registers a failing test saying why
 * and returns `t.describe.skip`, and outside CI warns loudly and returns `t.describe.skip`:
 * `describeIfPostgres({ describe, it }, await probePostgres())`.
 */
export function describeIfPostgres<Describe extends { skip: unknown }>(
  t: SuiteRunner<Describe>,
  problem: string | null,
): Describe | Describe['skip'] {
  if (problem === null) return t.describe;
  const message = `PostgreSQL is unavailable (${problem}).`;
  if (process.env.CI === 'true') {
    (t.describe as unknown as (name: string, body: () => void) => void)('PostgreSQL', () => {
      t.it('is available (required when CI=true)', () => {
        throw new Error(
          `${message} CI=true requires it: start PostgreSQL on 127.0.0.1:5432 or set PARLEY_TEST_DATABASE_URL.`,
        );
      });
    });
  } else {
    console.warn(
      `\n⚠️  ${'='.repeat(70)}\n⚠️  SKIPPING PostgreSQL tests: ${message}\n⚠️  Start PostgreSQL on 127.0.0.1:5432 or set PARLEY_TEST_DATABASE_URL.\n⚠️  ${'='.repeat(70)}\n`,
    );
  }
  return t.describe.skip;
}

/** A database made for one test run: its URL, and `drop()` to remove it (and end its sessions). */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates an empty database `parley_test_<random>` on the shared server (user postgres, trust auth). */
export async function createTestDatabase(adminUrl: string = POSTGRES_ADMIN_URL): Promise<TestDatabase> {
  const name = `parley_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await admin(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A PGlite database for one test: in memory, or in a new temporary folder when `onDisk`. */
export interface TestPglite {
  db: PgliteDatabase;
  /** The temporary folder, when on disk. */
  dataDir?: string;
  close(): Promise<void>;
}

/** Opens PGlite in memory (default) or in a fresh temporary folder removed by `close()`. */
export async function createTestPglite(options: { onDisk?: boolean } = {}): Promise<TestPglite> {
  const dataDir = options.onDisk ? mkdtempSync(join(tmpdir(), 'parley-pglite-')) : undefined;
  const db = await PGlite.create(dataDir ? { dataDir } : {});
  return {
    db,
    ...(dataDir ? { dataDir } : {}),
    close: async () => {
      if (!db.closed) await db.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
