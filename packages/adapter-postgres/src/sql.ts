/**
 * @module The one database interface the stores use: `query(text, params)` returning rows, on a
 * node-postgres `Pool` or a PGlite instance. Statements are unnamed (no prepared-statement
 * names), so they also work behind a transaction-mode pooler such as PgBouncer (docs/storage.md).
 */
import pg from 'pg';
import { callDeadline } from '@parley/core/adapter';
import { storageError } from './faults.js';

/** A row as the driver returns it: column name → value (jsonb parsed, int8 as a `number`). */
export type Row = Record<string, unknown>;

/**
 * A PostgreSQL connection source. `query` runs one statement (with `$1…` parameters) in one round
 * trip; `exec` runs a script of several statements without parameters (migrations);
 * `transaction` runs `work` on one connection between BEGIN and COMMIT (ROLLBACK when it throws).
 */
export interface Sql {
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
  exec(script: string): Promise<void>;
  transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /** Ends the pool or closes PGlite when this `Sql` created it; otherwise does nothing. */
  close(): Promise<void>;
}

/** int8 (OID 20) as a JavaScript number: Parley's counters and epoch milliseconds fit 2^53. */
const INT8 = 20;
const parseInt8 = (value: string): number => Number(value);
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The node-postgres pool settings that make rows look the same as on PGlite. */
export const PG_POOL_TYPES = pgTypes;

type Queryable = pg.Pool | pg.PoolClient;

class PgSql implements Sql {
  constructor(
    private readonly target: Queryable,
    private readonly owned: boolean,
    private readonly queryTimeoutMs?: number,
  ) {}

  async query<R extends Row = Row>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    const statement = { text, values: params as unknown[], types: pgTypes };
    try {
      // The deadline applies to statements run straight on the pool (see `withDeadline`).
      if (this.queryTimeoutMs !== undefined && this.target instanceof pg.Pool)
        return await withDeadline<R>(this.target, statement, this.queryTimeoutMs);
      return (await this.target.query<R>(statement)).rows;
    } catch (error) {
      throw storageError(error);
    }
  }

  async exec(script: string): Promise<void> {
    try {
      await this.target.query(script);
    } catch (error) {
      throw storageError(error);
    }
  }

  async transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (!(this.target instanceof pg.Pool)) return work(this); // already inside one
    const held = await checkOut(this.target).catch((error: unknown) => {
      throw storageError(error);
    });
    let broken = false;
    try {
      // Driver errors come wrapped from `inner.query`; what `work` throws itself passes unchanged.
      const inner = new PgSql(held.client, false);
      await inner.query('BEGIN');
      const result = await work(inner);
      await inner.query('COMMIT');
      return result;
    } catch (error) {
      await held.client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      held.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.owned && this.target instanceof pg.Pool) await this.target.end();
  }
}

/**
 * Runs `statement` on a connection of `pool`, rejecting once `ms` have passed without an answer
 * (as node-postgres's `query_timeout` does, but counting only time this process could have read
 * the answer: see `callDeadline`). The late connection is dropped, as pg-pool does after its
 * `query_timeout`, so a paused database fails fast and holds no connection.
 */
async function withDeadline<R extends Row>(pool: pg.Pool, statement: pg.QueryConfig, ms: number): Promise<R[]> {
  const { client, release } = await checkOut(pool);
  return new Promise<R[]>((resolve, reject) => {
    let expired = false;
    const cancel = callDeadline(ms, () => {
      expired = true;
      release(new Error('The statement was not answered in time.'));
      reject(new Error(`PostgreSQL did not answer within ${ms} ms`));
    });
    client.query<R>(statement).then(
      (result) => {
        if (expired) return;
        cancel();
        release();
        resolve(result.rows);
      },
      (error: unknown) => {
        if (expired) return;
        cancel();
        // The server answered with an error (a SQLSTATE): the connection is sound. Otherwise drop it.
        const answered = typeof (error as { code?: unknown }).code === 'string';
        release(answered ? undefined : (error as Error));
        reject(error);
      },
    );
  });
}

/**
 * A connection of `pool`, listened to for errors while it is held. pg-pool listens for a
 * connection's errors only while it is idle in the pool; one the server ends while it is checked
 * out but between statements (the FATAL 57P01 that every session receives when PostgreSQL shuts
 * down, `pg_terminate_backend`, a reset) would otherwise emit an unhandled `'error'` and take the
 * process down. Held here, the error is noted and the connection is dropped at `release` (the
 * statement that would have used it fails with "not queryable", a storage fault).
 *
 * The listener goes on in pg-pool's callback, not after an `await`: a connection is handed to the
 * next waiter inside the data event that finished its previous statement, and the server's FATAL
 * can follow in the same chunk, parsed before a promise continuation would run.
 */
function checkOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; release(error?: Error | boolean): void }> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client, done) => {
      if (error || !client) return reject(error);
      let lost: Error | undefined;
      const onError = (cause: Error) => (lost ??= cause);
      client.on('error', onError);
      resolve({
        client,
        release(failure) {
          client.off('error', onError);
          done(failure || lost);
        },
      });
    });
  });
}

/**
 * A `Sql` over a node-postgres pool; `owned` pools are ended by `close()`. With `queryTimeoutMs`,
 * a `query` outside a transaction not answered in time rejects as `service_unavailable` and its
 * connection is dropped (transactions, e.g. migrations, have no such deadline).
 */
export function sqlFromPool(pool: pg.Pool, owned = false, { queryTimeoutMs }: { queryTimeoutMs?: number } = {}): Sql {
  return new PgSql(pool, owned, queryTimeoutMs);
}

/** PGlite's value parsers by type OID: text of the value → what a row holds. */
export type PgliteParsers = Record<number, (value: string, typeId: number) => unknown>;

/** What PGlite and its transactions both answer: one statement with parameters, or a script. */
export interface PgliteQueryable {
  query<R>(text: string, params?: unknown[], options?: { parsers?: PgliteParsers }): Promise<{ rows: R[] }>;
  exec(script: string): Promise<unknown>;
}

/**
 * The part of a PGlite instance (`@electric-sql/pglite`) Parley uses; a `PGlite` is one. Typed here
 * so this package's declarations never import PGlite's, which do not compile in a project that
 * checks library types (`skipLibCheck: false`): they need `@types/emscripten`, which PGlite does
 * not install.
 */
export interface PgliteDatabase extends PgliteQueryable {
  readonly closed: boolean;
  transaction<T>(work: (tx: PgliteQueryable) => Promise<T>): Promise<T>;
  /** Resolves once LISTEN is in effect, to the function that stops this registration. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

type PgliteTarget = PgliteQueryable & Partial<Pick<PgliteDatabase, 'transaction' | 'close'>>;

class PgliteSql implements Sql {
  constructor(
    private readonly db: PgliteTarget,
    private readonly owned: boolean,
  ) {}

  async query<R extends Row = Row>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    try {
      return (await this.db.query<R>(text, params as unknown[], { parsers: { [INT8]: parseInt8 } })).rows;
    } catch (error) {
      throw storageError(error);
    }
  }

  async exec(script: string): Promise<void> {
    await this.db.exec(script);
  }

  async transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (!this.db.transaction) return work(this); // already inside one
    return this.db.transaction((tx) => work(new PgliteSql(tx, false)));
  }

  async close(): Promise<void> {
    if (this.owned && this.db.close) await this.db.close();
  }
}

/** A `Sql` over a PGlite instance; `owned` instances are closed by `close()`. */
export function sqlFromPglite(db: PgliteDatabase, owned = false): Sql {
  return new PgliteSql(db, owned);
}
