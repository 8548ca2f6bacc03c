/** @module Migrations on PostgreSQL and PGlite: fresh, re-run, concurrent runners, newer schema refused. */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSchema, loadMigrations, migrate, migrationScript, SchemaVersionError } from './migrate.js';
import { type Sql, sqlFromPglite, sqlFromPool } from './sql.js';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from './testing/index.js';

const migrations = loadMigrations();
const latest = migrations.at(-1)!.version;

function runMigrationTests(open: () => Promise<{ sql: Sql; close(): Promise<void> }>, concurrent: boolean) {
  let sql: Sql;
  let close: () => Promise<void>;
  beforeAll(async () => ({ sql, close } = await open()));
  afterAll(() => close());

  it('applies every migration to a fresh database, then re-runs as a no-op', async () => {
    await expect(checkSchema(sql, 'fresh')).rejects.toThrow(/parley migrate/);
    expect(await migrate(sql, 'fresh')).toEqual({ applied: migrations.map((m) => m.version), version: latest });
    expect(await migrate(sql, 'fresh')).toEqual({ applied: [], version: latest });
    await checkSchema(sql, 'fresh');
    const rows = await sql.query<{ version: number }>('SELECT version FROM fresh.schema_migrations ORDER BY version');
    expect(rows.map((row) => row.version)).toEqual(migrations.map((m) => m.version));
  });

  it('files applied one by one with other tooling (as docs/storage.md shows with psql) leave a schema Parley sees as current', async () => {
    for (const migration of migrations) {
      await sql.transaction(async (tx) => {
        await tx.exec(`CREATE SCHEMA IF NOT EXISTS by_hand; SET LOCAL search_path TO by_hand`);
        await tx.exec(migration.sql);
      });
    }
    await checkSchema(sql, 'by_hand');
    expect(await migrate(sql, 'by_hand')).toEqual({ applied: [], version: latest });
  });

  it('migrationScript (a new DATA_DIR applies it in a child) leaves the schema and rows migrate() leaves', async () => {
    await sql.transaction((tx) => tx.exec(migrationScript('scripted')));
    expect(await migrate(sql, 'scripted')).toEqual({ applied: [], version: latest });
    await migrate(sql, 'by_runner');
    // Defaults that name a sequence name it with its schema: compared without it.
    const shape = (schema: string) =>
      sql.query(
        `SELECT table_name, column_name, data_type, replace(column_default, $1 || '.', '') AS column_default, is_nullable
         FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, column_name`,
        [schema],
      );
    const rows = (schema: string) =>
      sql.query(`SELECT version, name FROM ${schema}.schema_migrations ORDER BY version`);
    expect(await shape('scripted')).toEqual(await shape('by_runner'));
    expect(await rows('scripted')).toEqual(await rows('by_runner'));
    expect((await rows('scripted')).length).toBe(migrations.length);
  });

  it('keeps schemas apart', async () => {
    await migrate(sql, 'other_schema');
    const [row] = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'other_schema' AND table_name = 'schema_migrations'`,
    );
    expect(row!.n).toBe(1);
  });

  if (concurrent)
    it('two runners at once: one applies, the other waits and finds nothing to do', async () => {
      const results = await Promise.all([migrate(sql, 'racing'), migrate(sql, 'racing')]);
      expect(results.map((r) => r.applied.length).sort()).toEqual([0, migrations.length]);
    });

  it('refuses a schema newer than the code', async () => {
    await migrate(sql, 'newer');
    await sql.query(`INSERT INTO newer.schema_migrations (version, name) VALUES ($1, 'from_the_future')`, [latest + 1]);
    await expect(migrate(sql, 'newer')).rejects.toThrow(SchemaVersionError);
    await expect(checkSchema(sql, 'newer')).rejects.toThrow(/newer than this Parley/);
  });
}

const problem = await probePostgres();
describeIfPostgres({ describe, it }, problem)('migrations on PostgreSQL', () => {
  runMigrationTests(async () => {
    const database: TestDatabase = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    pool.on('error', () => {});
    return { sql: sqlFromPool(pool, true), close: async () => (await pool.end(), await database.drop()) };
  }, true);

  it("waits for another runner longer than the pool's statement_timeout (two servers starting at once)", async () => {
    const database = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 2, statement_timeout: 300 });
    pool.on('error', () => {});
    const holder = new pg.Client({ connectionString: database.url });
    try {
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext('parley.migrate:' || $1))`, ['slow']);
      const waiting = migrate(sqlFromPool(pool), 'slow');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await holder.query('COMMIT');
      expect((await waiting).applied).toEqual(migrations.map((m) => m.version));
      // The request-time limit is back once the migrations' transaction ends.
      await expect(pool.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await holder.end();
      await pool.end();
      await database.drop();
    }
  });
});

describe('migrations on PGlite', () => {
  runMigrationTests(async () => {
    const test: TestPglite = await createTestPglite();
    return { sql: sqlFromPglite(test.db), close: () => test.close() };
  }, false);
});
