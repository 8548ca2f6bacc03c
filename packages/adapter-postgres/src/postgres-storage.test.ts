/** @module PostgresStorage against the storage port's contract, on a real PostgreSQL and on PGlite. */
import { randomUUID } from 'node:crypto';
import { runStorageContract, type StorageFactoryOptions } from '@parley/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresStorage } from './postgres-storage.js';
import { type Sql, sqlFromPglite, sqlFromPool } from './sql.js';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from './testing/index.js';

/** Each test gets a schema of its own in the run's database, dropped afterwards. */
function storageIn(sql: () => Sql) {
  return async (options: StorageFactoryOptions) => {
    const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await migrate(sql(), schema);
    return {
      storage: new PostgresStorage({ sql: sql(), schema, ...options }),
      cleanup: async () => void (await sql().exec(`DROP SCHEMA ${schema} CASCADE`)),
    };
  };
}

describeIfPostgres({ describe, it }, await probePostgres())('PostgresStorage on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 10 });
    // The run's database is dropped WITH (FORCE) at the end: a session it ends is not a failure.
    pool.on('error', () => {});
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });
  runStorageContract(
    { describe, it, expect },
    storageIn(() => sqlFromPool(pool)),
  );
});

describe('PostgresStorage on PGlite', () => {
  let test: TestPglite;
  beforeAll(async () => {
    test = await createTestPglite();
  });
  afterAll(() => test.close());
  runStorageContract(
    { describe, it, expect },
    storageIn(() => sqlFromPglite(test.db)),
  );
});
