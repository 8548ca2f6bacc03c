import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { openDataDir, PGLITE_SHARED_BUFFERS } from './embedded.js';
import { loadMigrations, migrate } from './migrate.js';
import { sqlFromPglite } from './sql.js';

describe('a data folder opened by openDataDir and postgresAdapters', () => {
  const dirs: string[] = [];
  const folder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-embedded-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // Creating a folder (initdb in WebAssembly, in a child) and opening it twice takes seconds, more on a busy machine.
  it(
    'is created in a child, runs with small shared buffers, and opens again as it was',
    { timeout: 90_000 },
    async () => {
      const dataDir = folder();
      const first = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
      await first.ready();
      const [setting] = await first.sql.query<{ shared_buffers: string }>('SHOW shared_buffers');
      expect(setting?.shared_buffers).toBe(PGLITE_SHARED_BUFFERS);
      await first.sql.query('CREATE TABLE public.kept (id integer)');
      await first.sql.query('INSERT INTO public.kept VALUES (1)');
      await first.close();

      const second = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
      await second.ready();
      expect(await second.sql.query('SELECT id FROM public.kept')).toEqual([{ id: 1 }]);
      await second.close();
    },
  );

  const migrations = loadMigrations();
  const latest = migrations.at(-1)!.version;

  it(
    'is migrated in the child: the server opens it at the current version, its own migrate() applies nothing',
    { timeout: 90_000 },
    async () => {
      const sql = sqlFromPglite(openDataDir(folder(), 'custom'), true);
      try {
        expect(await migrate(sql, 'custom')).toEqual({ applied: [], version: latest });
        expect(await sql.query('SELECT version, name FROM custom.schema_migrations ORDER BY version')).toEqual(
          migrations.map(({ version, name }) => ({ version, name })),
        );
      } finally {
        await sql.close();
      }
    },
  );

  it(
    'made by an older Parley (fewer migrations in its child), is migrated by the server',
    { timeout: 90_000 },
    async () => {
      const sql = sqlFromPglite(openDataDir(folder(), 'parley', migrations.slice(0, -2)), true);
      try {
        expect(await migrate(sql, 'parley')).toEqual({
          applied: migrations.slice(-2).map((m) => m.version),
          version: latest,
        });
      } finally {
        await sql.close();
      }
    },
  );

  it("fails naming the folder and the child's error when a migration fails", { timeout: 90_000 }, async () => {
    const dataDir = folder();
    const db = openDataDir(dataDir, 'parley', [{ version: 1, name: 'broken', sql: 'SELECT * FROM nowhere' }]);
    await expect(db.query('SELECT 1')).rejects.toThrow(
      new RegExp(`DATA_DIR ${dataDir} failed: .*"nowhere" does not exist`),
    );
    await db.close();
  });
});
