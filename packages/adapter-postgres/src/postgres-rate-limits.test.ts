/**
 * @module The PostgreSQL rate-limit store's own clock per key (the shared contract runs in
 * postgres-contracts.test.ts): hits that queue on the key's row lock and are decided out of the
 * order their times were read in still count down `remaining` one by one. On PGlite, so it runs
 * without a server; the statement is the same on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresRateLimitStore } from './postgres-rate-limits.js';
import { sqlFromPglite } from './sql.js';
import { createTestPglite, type TestPglite } from './testing/index.js';

describe('PostgresRateLimitStore', () => {
  let pglite: TestPglite;
  let store: PostgresRateLimitStore;
  beforeAll(async () => {
    pglite = await createTestPglite();
    const sql = sqlFromPglite(pglite.db);
    await migrate(sql, 'parley');
    store = new PostgresRateLimitStore({ sql });
  });
  afterAll(() => pglite.close());

  it('decides a hit whose time is earlier than the last one at the last one: remaining still counts down', async () => {
    const rule = { limit: 100, periodMs: 3_600_000 };
    const at = 1_800_000_000_000;
    // Read in this order, decided in the other: 5 ms earlier than the hit before it.
    const decided = [await store.hit('ws_clock', rule, at), await store.hit('ws_clock', rule, at - 5), await store.hit('ws_clock', rule, at + 1)];
    expect(decided.map((decision) => decision.remaining)).toEqual([99, 98, 97]);
    expect(decided.every((decision) => decision.allowed)).toBe(true);
    // The earlier hit was decided at `at`, so its reset is measured from there.
    expect(decided[1]!.resetMs).toBe(2 * 36_000);
  });
});
