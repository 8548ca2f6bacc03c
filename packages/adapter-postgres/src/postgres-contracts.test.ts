/** @module API keys, rate limits and idempotency against core's contracts, on PostgreSQL and on PGlite. */
import { runApiKeyStoreContract, runIdempotencyStoreContract, runRateLimitStoreContract } from '@parley/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresApiKeyStore } from './postgres-api-keys.js';
import { PostgresIdempotencyStore } from './postgres-idempotency.js';
import { PostgresRateLimitStore } from './postgres-rate-limits.js';
import { type Sql, sqlFromPglite, sqlFromPool } from './sql.js';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from './testing/index.js';

/** The three contracts over one migrated schema; API key tests each get a clean table. */
function runContracts(sql: () => Sql) {
  const schema = 'parley';
  runApiKeyStoreContract({ describe, it, expect }, async () => {
    await sql().query(`DELETE FROM ${schema}.api_keys`);
    return new PostgresApiKeyStore({ sql: sql(), schema });
  });
  runRateLimitStoreContract({ describe, it, expect }, () => new PostgresRateLimitStore({ sql: sql(), schema }));
  runIdempotencyStoreContract({ describe, it, expect }, () => ({
    store: new PostgresIdempotencyStore({ sql: sql(), schema }),
  }));
}

describeIfPostgres({ describe, it }, await probePostgres())('API keys, rate limits, idempotency on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 10 });
    // The run's database is dropped WITH (FORCE) at the end: a session it ends is not a failure.
    pool.on('error', () => {});
    await migrate(sqlFromPool(pool), 'parley');
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });
  runContracts(() => sqlFromPool(pool));
});

describe('API keys, rate limits, idempotency on PGlite', () => {
  let test: TestPglite;
  beforeAll(async () => {
    test = await createTestPglite();
    await migrate(sqlFromPglite(test.db), 'parley');
  });
  afterAll(() => test.close());
  runContracts(() => sqlFromPglite(test.db));
});
