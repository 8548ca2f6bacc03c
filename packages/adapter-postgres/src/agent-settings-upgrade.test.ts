/**
 * @module Upgrading agents stored with their settings inside `configuration` (migration 0006), on
 * PostgreSQL and on a PGlite data folder (`DATA_DIR`): records written the old way by raw SQL into
 * a schema at version 5, then opened by `postgresAdapters` as a server start does.
 */
import { rmSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Agent } from '@parley/core';
import { recordVersion } from '@parley/core/adapter';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { loadMigrations, migrate } from './migrate.js';
import { type Sql, sqlFromPglite, sqlFromPool } from './sql.js';
import { createTestDatabase, createTestPglite, describeIfPostgres, probePostgres } from './testing/index.js';
import type { TestDatabase } from './testing/index.js';

const WS = 'ws_upgrade';
const tool = { name: 'lookup', description: 'Looks an order up.', parameters: { type: 'object' }, kind: 'client' };

/** An agent as Parley stored it before 0006: its settings, if any, inside `configuration`. */
function oldAgent(id: string, configuration: Record<string, unknown>) {
  const at = '2026-03-01T09:00:00.000Z';
  const unset = { systemPrompt: null, temperature: null, maxTokens: null };
  const times = { createdAt: at, updatedAt: at };
  return { id, name: 'Ada', description: '', model: 'modelA-4', ...unset, configuration, status: 'active', ...times };
}

const OLD_AGENTS = [
  // Every setting, beside keys of the caller's own.
  oldAgent('agt_settings', { tools: [tool], maxSteps: 3, autoReply: false, depth: 2, nested: { tools: ['kept'] } }),
  // No settings: the defaults.
  oldAgent('agt_plain', {}),
  // Values Parley never acted on as settings stay the caller's keys; the settings take their defaults.
  oldAgent('agt_callers', { tools: ['search'], maxSteps: 'many', autoReply: 'sometimes' }),
];

/** Writes {@link OLD_AGENTS} into `schema` the way Parley did at schema version 5, by raw SQL. */
async function writeOldAgents(sql: Sql, schema: string): Promise<void> {
  await migrate(
    sql,
    schema,
    loadMigrations().filter((migration) => migration.version <= 5),
  );
  for (const agent of OLD_AGENTS) {
    await sql.query(`INSERT INTO ${schema}.agents (workspace_id, id, status, data) VALUES ($1, $2, $3, $4::jsonb)`, [
      WS,
      agent.id,
      agent.status,
      JSON.stringify(agent),
    ]);
  }
}

/** What the upgraded records must be: settings top-level, the caller's keys left in `configuration`, one version on per upgrade, with no MCP servers. */
async function expectUpgraded(get: (id: string) => Promise<Agent | null>): Promise<void> {
  const [settings, plain, callers] = await Promise.all(OLD_AGENTS.map((agent) => get(agent.id)));
  const configuration = { depth: 2, nested: { tools: ['kept'] } };
  const none = { mcpServers: [] };
  expect(settings).toEqual({ ...OLD_AGENTS[0], configuration, tools: [tool], maxSteps: 3, autoReply: false, ...none });
  expect(plain).toEqual({ ...OLD_AGENTS[1], tools: [], maxSteps: 8, autoReply: true, ...none });
  expect(callers).toEqual({ ...OLD_AGENTS[2], tools: [], maxSteps: 8, autoReply: true, ...none });
  // One version on per upgrade: the settings (0006 / agent-settings), then `mcpServers` (0010 / agent-mcp-servers).
  for (const agent of [settings, plain, callers]) expect(recordVersion(agent!)).toBe(3);
}

describeIfPostgres({ describe, it }, await probePostgres())('agent settings upgrade on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it("a start after the upgrade finds every setting top-level, the caller's keys kept in configuration", async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      await writeOldAgents(sqlFromPool(pool), 'parley');
    } finally {
      await pool.end();
    }
    const adapters = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
    try {
      await adapters.ready();
      await expectUpgraded((id) => adapters.storage.agents.get({ workspaceId: WS }, id));
      // Once: a second start changes nothing more.
      await adapters.close();
      const again = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
      await again.ready();
      await expectUpgraded((id) => again.storage.agents.get({ workspaceId: WS }, id));
      await again.close();
    } finally {
      await adapters.close();
    }
  });
});

describe('agent settings upgrade on a PGlite data folder', () => {
  let dataDir: string;
  beforeAll(async () => {
    const folder = await createTestPglite({ onDisk: true });
    dataDir = folder.dataDir!;
    await folder.db.close();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // Creating and reopening a PGlite data folder (WebAssembly) takes seconds, more on a busy machine.
  const title = "a DATA_DIR start after the upgrade finds every setting top-level, the caller's keys kept";
  it(title, { timeout: 90_000 }, async () => {
    const old = new PGlite(dataDir);
    await writeOldAgents(sqlFromPglite(old), 'parley');
    await old.close();
    const adapters = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
    try {
      await adapters.ready(60_000);
      await expectUpgraded((id) => adapters.storage.agents.get({ workspaceId: WS }, id));
    } finally {
      await adapters.close();
    }
  });
});
