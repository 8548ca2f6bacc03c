/**
 * @module Reads by id in batches (record-reader.ts): what one batch answers each caller. The storage
 * contract (postgres-storage.test.ts) covers single reads; here, many at once. On PGlite.
 */
import { recordVersion } from '@parley/core/adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.js';
import { PostgresStorage } from '../postgres-storage.js';
import { sqlFromPglite } from '../sql.js';
import { createTestPglite, type TestPglite } from '../testing/index.js';

describe('reads by id, batched', () => {
  let test: TestPglite;
  let storage: PostgresStorage;
  beforeAll(async () => {
    test = await createTestPglite();
    const sql = sqlFromPglite(test.db);
    await migrate(sql, 'parley');
    await sql.exec(`INSERT INTO parley.agents (workspace_id, id, status, data, version)
      SELECT 'ws_' || (g % 3), 'agt_' || g, 'active', jsonb_build_object('id', 'agt_' || g, 'name', 'Agent ' || g), g FROM generate_series(1, 30) g`);
    storage = new PostgresStorage({ sql });
  });
  afterAll(() => test.close());

  it('answers each of many concurrent reads its own record, or null for another workspace or no such id', async () => {
    const asked = Array.from({ length: 40 }, (_, i) => ({
      workspace: `ws_${(i + (i % 4 === 0 ? 1 : 0)) % 3}`,
      id: `agt_${i}`,
    }));
    const read = await Promise.all(
      asked.map(({ workspace, id }) => storage.agents.get({ workspaceId: workspace }, id)),
    );
    read.forEach((agent, i) => {
      const { workspace, id } = asked[i]!;
      const exists = i >= 1 && i <= 30 && workspace === `ws_${i % 3}`;
      expect(agent === null ? null : { id: agent.id, version: recordVersion(agent) }).toEqual(
        exists ? { id, version: i } : null,
      );
    });
  });

  it('an id PostgreSQL text cannot hold (NUL) is not found, and the reads batched with it still answer', async () => {
    const [hostile, ...others] = await Promise.all([
      storage.agents.get({ workspaceId: 'ws_1' }, 'agt_\u00001'),
      storage.agents.get({ workspaceId: 'ws_1' }, 'agt_1'),
      storage.agents.get({ workspaceId: 'ws_2' }, 'agt_2'),
    ]);
    expect(hostile).toBeNull();
    expect(others.map((agent) => agent?.id)).toEqual(['agt_1', 'agt_2']);
  });
});
