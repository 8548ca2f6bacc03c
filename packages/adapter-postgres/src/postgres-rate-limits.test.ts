/**
 * @module The PostgreSQL rate-limit store beyond the shared contract (postgres-contracts.test.ts):
 * its own clock per key, and hits decided in batches. On PGlite, so it runs without a server; the
 * statement is the same on PostgreSQL, where two stores (two processes) also share keys.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresRateLimitStore } from './postgres-rate-limits.js';
import { sqlFromPglite, sqlFromPool } from './sql.js';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from './testing/index.js';

const rule = { limit: 100, periodMs: 3_600_000 };
const at = 1_800_000_000_000;

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
    // Read in this order, decided in the other: 5 ms earlier than the hit before it.
    const decided = [
      await store.hit('ws_clock', rule, at),
      await store.hit('ws_clock', rule, at - 5),
      await store.hit('ws_clock', rule, at + 1),
    ];
    expect(decided.map((decision) => decision.remaining)).toEqual([99, 98, 97]);
    expect(decided.every((decision) => decision.allowed)).toBe(true);
    // The earlier hit was decided at `at`, so its reset is measured from there.
    expect(decided[1]!.resetMs).toBe(2 * 36_000);
  });

  it('decides concurrent hits of several keys one by one, in the order they were made', async () => {
    // 130 hits of one key and 3 of another, made in one turn: they go out in one statement.
    const hits = Array.from({ length: 130 }, (_, i) => store.hit('ws_burst', rule, at + i));
    const others = [store.hit('ws_a_other', rule, at), store.hit('ws_a_other', rule, at)];
    const decided = await Promise.all(hits);
    expect(decided.slice(0, 100).map((decision) => decision.remaining)).toEqual(
      Array.from({ length: 100 }, (_, i) => 99 - i),
    );
    expect(decided.slice(100).every((decision) => !decision.allowed && decision.retryAfterMs > 0)).toBe(true);
    expect((await Promise.all(others)).map((decision) => decision.remaining)).toEqual([99, 98]);
  });

  it('decides a batch of one key on the state the batch before left, and refills with time', async () => {
    // limit 3 an hour: one hit every 20 minutes, a burst of 3.
    const three = { limit: 3, periodMs: 3_600_000 };
    const batch = (times: number[]) => Promise.all(times.map((time) => store.hit('ws_state', three, time)));
    const summary = (decisions: Awaited<ReturnType<typeof batch>>) =>
      decisions.map((decision) => (decision.allowed ? decision.remaining : `refused ${decision.retryAfterMs}`));
    expect(summary(await batch([at, at]))).toEqual([2, 1]);
    expect(summary(await batch([at + 1, at + 1, at + 1]))).toEqual([0, 'refused 1199999', 'refused 1199999']);
    // 20 minutes later one hit's worth is back; a refused hit took nothing.
    expect(summary(await batch([at + 1_200_000, at + 1_200_000]))).toEqual([0, 'refused 1200000']);
    // One hit alone (the single-upsert path) continues from there.
    expect(summary([await store.hit('ws_state', three, at + 1_200_001)])).toEqual(['refused 1199999']);
  });
});

describeIfPostgres({ describe, it }, await probePostgres())('PostgresRateLimitStore on PostgreSQL', () => {
  let database: TestDatabase;
  let pools: pg.Pool[];
  beforeAll(async () => {
    database = await createTestDatabase();
    pools = [0, 1].map(() => new pg.Pool({ connectionString: database.url, max: 1 }).on('error', () => {}));
    await migrate(sqlFromPool(pools[0]!), 'parley');
    // Both connections open, so the two stores' first statements overlap.
    await Promise.all(pools.map((pool) => pool.query('SELECT 1')));
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await database.drop();
  });

  it('two processes sharing keys, each hitting them in the other order, admit exactly the limit and never deadlock', async () => {
    const [one, two] = pools.map((pool) => new PostgresRateLimitStore({ sql: sqlFromPool(pool) }));
    const keys = Array.from({ length: 50 }, (_, i) => `ws_${String(i).padStart(2, '0')}`);
    const admitted = new Map(keys.map((key) => [key, 0]));
    // Each round, each process sends one statement of 500 hits, one of them in the reverse key
    // order. Sent in the order they were made, two overlapping statements would lock rows in
    // opposite orders, and PostgreSQL would abort one of them as a deadlock in some rounds.
    for (let round = 0; round < 8; round += 1) {
      const made = Array.from({ length: 10 }, () => [
        ...keys.map((key) => [one!, key] as const),
        ...[...keys].reverse().map((key) => [two!, key] as const),
      ]).flat();
      const decided = await Promise.all(made.map(([store, key]) => store.hit(key, rule, at + round)));
      decided.forEach((decision, i) => decision.allowed && admitted.set(made[i]![1], admitted.get(made[i]![1])! + 1));
    }
    // 160 hits of each key, within one period: exactly the limit admitted.
    expect(new Set(admitted.values())).toEqual(new Set([100]));
  });
});
