/** @module postgresAdapters(): the bundle on a PGlite folder (durable, one process) and on a PostgreSQL server. */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordVersion } from '@parley/core/adapter';
import { randomUUID } from 'node:crypto';
import { Records, runAdaptersContract } from '@parley/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { DataDirLockedError, LOCK_FILE } from './data-dir-lock.js';
import { SchemaVersionError } from './migrate.js';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from './testing/index.js';

/** A schema of its own for each bundle the contract opens, so each `ready()` migrates from nothing. */
const freshSchema = () => `b_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

describe('postgresAdapters on an in-memory PGlite', () => {
  let test: TestPglite;
  beforeAll(async () => {
    test = await createTestPglite();
  });
  afterAll(() => test.close());
  // PGlite runs in this process: its connection cannot be lost nor its server be away.
  runAdaptersContract({ describe, it, expect }, () =>
    postgresAdapters({ pglite: test.db, schema: freshSchema(), sweepIntervalMs: 0 }),
  );
});

describe('postgresAdapters on a PGlite folder', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-data-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // Creating a PGlite data folder (initdb in WebAssembly) takes seconds, more on a busy machine.
  it(
    'keeps acknowledged writes across a close and reopen, and refuses a second opener meanwhile',
    { timeout: 90_000 },
    async () => {
      const records = new Records();
      const first = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
      await first.ready();
      expect(first.info).toMatchObject({ name: 'PGlite', durable: true });
      const agent = await records.insertAgent(first.storage, 'ws');
      expect(() => postgresAdapters({ dataDir })).toThrow(DataDirLockedError);
      await first.close();

      const second = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
      await second.ready();
      expect(await second.storage.agents.get({ workspaceId: 'ws' }, agent.id)).toEqual(agent);
      expect((await second.storage.events.list({ workspaceId: 'ws' }, { limit: 10 }))?.events).toHaveLength(1);
      await second.close();
    },
  );

  it('takes over the lock of a process that is gone', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-data-'));
    try {
      const child = fork('-e', [''], { execArgv: [] });
      const pid = child.pid!;
      await new Promise((resolve) => child.on('exit', resolve));
      writeFileSync(join(dir, LOCK_FILE), `${pid}\n`);
      const adapters = postgresAdapters({ dataDir: dir, sweepIntervalMs: 0 });
      await adapters.ready();
      await adapters.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeIfPostgres({ describe, it }, await probePostgres())('postgresAdapters on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  describe('the bundle contract', () => {
    let admin: pg.Pool;
    beforeAll(() => {
      admin = new pg.Pool({ connectionString: database.url, max: 2 });
    });
    afterAll(() => admin.end());
    runAdaptersContract(
      { describe, it, expect },
      () => {
        // Trust authentication takes any password: the banner line must not show it.
        const url = new URL(database.url);
        url.password = 'contract-secret';
        const schema = freshSchema();
        const adapters = postgresAdapters({ connectionString: url.toString(), schema, sweepIntervalMs: 0 });
        return {
          adapters,
          secrets: ['contract-secret'],
          cleanup: async () => void (await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
        };
      },
      {
        // Ends every session of the test database but the admin's: the bundle's pool and its LISTEN connection.
        dropConnection: async () => {
          await admin.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
        },
        unreachable: () =>
          postgresAdapters({
            connectionString: 'postgres://postgres:contract-secret@127.0.0.1:1/nowhere',
            sweepIntervalMs: 0,
          }),
      },
    );
  });

  it('with migrations off, refuses an unmigrated schema and names parley migrate; auto migrates', async () => {
    const off = postgresAdapters({ connectionString: database.url, migrations: 'off', sweepIntervalMs: 0 });
    await expect(off.ready()).rejects.toThrow(SchemaVersionError);
    await expect(off.ready()).rejects.toThrow(/parley migrate/);
    await off.close();
    const auto = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
    await auto.ready();
    expect(auto.info.description).not.toContain('postgres@');
    await auto.close();
  });

  it('200 concurrent changes of one agent through the pool all apply, none undone (version 201)', async () => {
    // Waiting for a pooled connection counts toward connectionTimeoutMs (pg.Pool): under a 2-core CI
    // machine's load 200 queued statements may wait longer than the 1 s default.
    const adapters = postgresAdapters({
      connectionString: database.url,
      poolSize: 20,
      connectionTimeoutMs: 10_000,
      sweepIntervalMs: 0,
    });
    try {
      await adapters.ready();
      const records = new Records();
      const agent = await records.insertAgent(adapters.storage, 'ws_patch', { configuration: {} });
      const names = Array.from({ length: 200 }, (_, index) => `name ${index}`);
      const results = await Promise.all(
        names.map((name) => adapters.storage.agents.update({ workspaceId: 'ws_patch' }, agent.id, { set: { name } })),
      );
      expect(results.map((result) => result?.outcome)).toEqual(names.map(() => 'applied'));
      const stored = (await adapters.storage.agents.get({ workspaceId: 'ws_patch' }, agent.id))!;
      expect(recordVersion(stored)).toBe(201);
      expect(names).toContain(stored.name);
    } finally {
      await adapters.close();
    }
  });

  it('a database that does not answer is service_unavailable within about a second', async () => {
    const adapters = postgresAdapters({
      connectionString: 'postgres://postgres@127.0.0.1:1/nowhere',
      sweepIntervalMs: 0,
    });
    const started = Date.now();
    await expect(adapters.storage.agents.get({ workspaceId: 'ws' }, 'agt_x')).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(Date.now() - started).toBeLessThan(1_500);
    await adapters.close();
  });

  it('the sweep deletes expired rows in batches', async () => {
    const adapters = postgresAdapters({ connectionString: database.url, eventRetentionMs: 100, sweepIntervalMs: 0 });
    await adapters.ready();
    const records = new Records();
    await records.insertAgentsWithEvents(adapters.storage, 'ws_sweep', 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await adapters.sweep()).toBeGreaterThanOrEqual(6); // 3 events + 3 outbox rows
    const [row] = await adapters.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM parley.events WHERE workspace_id = 'ws_sweep'`,
    );
    expect(row!.n).toBe(0);
    await adapters.close();
  });
});
