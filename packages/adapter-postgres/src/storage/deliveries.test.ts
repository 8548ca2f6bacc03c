/**
 * @module Delivery attempts recorded in batches (deliveries.ts): many at once go out in one INSERT,
 * and one the database refuses fails only its own call. The storage contract
 * (postgres-storage.test.ts) covers what is stored; here, how. On PGlite.
 */
import { Records } from '@parley/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.js';
import { PostgresStorage } from '../postgres-storage.js';
import { sqlFromPglite, type Sql } from '../sql.js';
import { createTestPglite, type TestPglite } from '../testing/index.js';

const WS = 'ws_deliveries';

describe('delivery attempts, recorded in batches', () => {
  let test: TestPglite;
  let storage: PostgresStorage;
  const inserts: string[] = [];
  beforeAll(async () => {
    test = await createTestPglite();
    const sql = sqlFromPglite(test.db);
    await migrate(sql, 'parley');
    const counted: Sql = {
      ...sql,
      query: (text, params) => {
        if (/INSERT INTO \S+\.deliveries/.test(text)) inserts.push(text);
        return sql.query(text, params);
      },
    };
    storage = new PostgresStorage({ sql: counted });
  });
  afterAll(() => test.close());

  it('attempts recorded at once go out in one INSERT', async () => {
    const records = new Records();
    const endpoint = await records.insertEndpoint(storage, WS);
    const event = records.event(WS, 'agent.created', records.agent());
    const attempts = Array.from({ length: 20 }, () => records.attempt(endpoint.id, event, { status: 204 }));
    inserts.length = 0;
    await Promise.all(attempts.map((attempt) => storage.deliveries.record({ workspaceId: WS }, attempt)));
    expect(inserts).toHaveLength(1);
    const listed = await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 50 });
    expect(listed!.deliveries.map((attempt) => attempt.id).sort()).toEqual(
      attempts.map((attempt) => attempt.id).sort(),
    );
  });

  it('an attempt the database refuses (a NUL in its text) fails its own call; those batched with it are recorded', async () => {
    const records = new Records();
    const endpoint = await records.insertEndpoint(storage, WS);
    const event = records.event(WS, 'agent.created', records.agent());
    const good = [records.attempt(endpoint.id, event), records.attempt(endpoint.id, event)];
    const refused = records.attempt(endpoint.id, { ...event, id: 'evt_\u0000' });
    const outcomes = await Promise.allSettled(
      [good[0]!, refused, good[1]!].map((attempt) => storage.deliveries.record({ workspaceId: WS }, attempt)),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    for (const attempt of good)
      expect(await storage.deliveries.get({ workspaceId: WS }, endpoint.id, attempt.id)).toEqual(attempt);
    expect(await storage.deliveries.get({ workspaceId: WS }, endpoint.id, refused.id)).toBeNull();
  });
});
