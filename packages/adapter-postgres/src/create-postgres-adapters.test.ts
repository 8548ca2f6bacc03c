/** @module postgresAdapters(): the bundle on a PGlite folder (durable, one process) and on a PostgreSQL server. */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Records } from '@parley/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { DataDirLockedError, LOCK_FILE } from './data-dir-lock.js';
import { SchemaVersionError } from './migrate.js';
import { createTestDatabase, describeIfPostgres, probePostgres, type TestDatabase } from './testing/index.js';

describe('postgresAdapters on a PGlite folder', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-data-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // Creating a PGlite data folder (initdb in WebAssembly) takes seconds, more on a busy machine.
  it('keeps acknowledged writes across a close and reopen, and refuses a second opener meanwhile', { timeout: 90_000 }, async () => {
    const records = new Records();
    const first = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
    await first.ready();
    expect(first.info).toMatchObject({ name: 'PGlite', durable: true });
    const agent = await records.insertAgent(first.storage, 'ws');
    expect(() => postgresAdapters({ dataDir })).toThrow(DataDirLockedError);
    await first.close();

    const second = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
    await second.ready();
    expect(await second.storage.agents.get('ws', agent.id)).toEqual(agent);
    expect((await second.storage.events.list('ws', { limit: 10 }))?.events).toHaveLength(1);
    await second.close();
  });

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

  it('200 concurrent updates of one agent all succeed and no field is lost', async () => {
    // Waiting for a pooled connection counts toward connectionTimeoutMs (pg.Pool): under a 2-core CI
    // machine's load 200 queued transactions may wait longer than the 1 s default.
    const adapters = postgresAdapters({ connectionString: database.url, poolSize: 20, connectionTimeoutMs: 10_000, sweepIntervalMs: 0 });
    await adapters.ready();
    const records = new Records();
    const agent = await records.insertAgent(adapters.storage, 'ws_patch', { configuration: {} });
    const keys = Array.from({ length: 200 }, (_, index) => `k${index}`);
    await Promise.all(keys.map((key) => adapters.storage.agents.update('ws_patch', agent.id, (current) => ({ record: { ...current, configuration: { ...current.configuration, [key]: key } } }))));
    expect(Object.keys((await adapters.storage.agents.get('ws_patch', agent.id))!.configuration)).toHaveLength(200);
    await adapters.close();
  });

  it('a database that does not answer is service_unavailable within about a second', async () => {
    const adapters = postgresAdapters({ connectionString: 'postgres://postgres@127.0.0.1:1/nowhere', sweepIntervalMs: 0 });
    const started = Date.now();
    await expect(adapters.storage.agents.get('ws', 'agt_x')).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(Date.now() - started).toBeLessThan(1_500);
    await expect(adapters.ready(300)).rejects.toThrow(/did not answer/);
    await adapters.close();
  });

  it('the sweep deletes expired rows in batches', async () => {
    const adapters = postgresAdapters({ connectionString: database.url, eventRetentionMs: 100, sweepIntervalMs: 0 });
    await adapters.ready();
    const records = new Records();
    await records.insertAgentsWithEvents(adapters.storage, 'ws_sweep', 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await adapters.sweep()).toBeGreaterThanOrEqual(6); // 3 events + 3 outbox rows
    const [row] = await adapters.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM parley.events WHERE workspace_id = 'ws_sweep'`);
    expect(row!.n).toBe(0);
    await adapters.close();
  });
});
