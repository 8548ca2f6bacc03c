/**
 * @module The pool `Sql`: its client-side statement deadline (late answers fail fast, stalls of
 * this process do not count), and a connection the server ends while a transaction holds it.
 */
import { ErrorCode, isParleyError } from '@parley/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlFromPool, type Sql } from './sql.js';
import { createTestDatabase, describeIfPostgres, probePostgres, type TestDatabase } from './testing/index.js';

const problem = await probePostgres();
describeIfPostgres({ describe, it }, problem)('the pool Sql on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let sql: Sql;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    pool.on('error', () => {});
    sql = sqlFromPool(pool, false, { queryTimeoutMs: 300 });
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it('with a 300 ms deadline, fails a late statement with service_unavailable and drops its connection', async () => {
    const startedAt = Date.now();
    const error = await sql.query('SELECT pg_sleep(1)').then(
      () => null,
      (rejection: unknown) => rejection,
    );
    expect(isParleyError(error, ErrorCode.serviceUnavailable), String(error)).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(900);
    await expect(sql.query<{ one: number }>('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
    expect(pool.totalCount).toBe(1); // the late connection was dropped, not returned
  });

  it('with a deadline, gives a statement the time this process was busy past the deadline', async () => {
    const startedAt = Date.now();
    const answered = sql.query<{ done: string }>("SELECT pg_sleep(0.7), 'yes' AS done");
    // Busy from 20 ms to 600 ms, past the 300 ms deadline; the answer comes 100 ms after that.
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        for (const until = startedAt + 600; Date.now() < until;);
        resolve();
      }, 20),
    );
    await expect(answered).resolves.toEqual([{ pg_sleep: '', done: 'yes' }]);
  });

  // As when PostgreSQL shuts down: every session gets a FATAL 57P01, also one waiting between two
  // statements of a transaction. Unheard, that error would be thrown as an uncaught exception.
  it('fails a transaction whose connection is ended between two statements with a 503, not a crash', async () => {
    const error = await sqlFromPool(pool)
      .transaction(async (inner) => {
        const [session] = await inner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await pool.query('SELECT pg_terminate_backend($1)', [session!.pid]);
        // Between statements: the FATAL arrives while no statement of this connection runs.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await inner.query('SELECT 1');
      })
      .then(
        () => null,
        (rejection: unknown) => rejection,
      );
    expect(isParleyError(error, ErrorCode.serviceUnavailable), String(error)).toBe(true);
    await expect(sqlFromPool(pool).query<{ one: number }>('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
  });
});
