/**
 * @module The one database interface the stores use: `query(text, params)` returning rows, on a
 * node-postgres `Pool` or a PGlite instance. Statements are unnamed (no prepared-statement
 * names), so they also work behind a transaction-mode pooler such as PgBouncer (docs/storage.md).
 */
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
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
  getTypeParser: ((oid: number, format?: string) => (oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser,
};

/** The node-postgres pool settings that make rows look the same as on PGlite. */
export const PG_POOL_TYPES = pgTypes;

type Queryable = pg.Pool | pg.PoolClient;

class PgSql implements Sql {
  constructor(private readonly target: Queryable, private readonly owned: boolean) {}

  async query<R extends Row = Row>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    try {
      return (await this.target.query<R>({ text, values: params as unknown[], types: pgTypes })).rows;
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
    const client = await this.target.connect().catch((error: unknown) => {
      throw storageError(error);
    });
    let broken = false;
    try {
      // Driver errors come wrapped from `inner.query`; what `work` throws itself passes unchanged.
      const inner = new PgSql(client, false);
      await inner.query('BEGIN');
      const result = await work(inner);
      await inner.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.owned && this.target instanceof pg.Pool) await this.target.end();
  }
}

/** A `Sql` over a node-postgres pool; `owned` pools are ended by `close()`. */
export function sqlFromPool(pool: pg.Pool, owned = false): Sql {
  return new PgSql(pool, owned);
}

interface PGliteLike {
  query: PGlite['query'];
  exec: PGlite['exec'];
  transaction?: PGlite['transaction'];
  close?: PGlite['close'];
}

class PgliteSql implements Sql {
  constructor(private readonly db: PGliteLike, private readonly owned: boolean) {}

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
    return this.db.transaction((tx) => work(new PgliteSql(tx as unknown as PGliteLike, false)));
  }

  async close(): Promise<void> {
    if (this.owned && this.db.close) await this.db.close();
  }
}

/** A `Sql` over a PGlite instance; `owned` instances are closed by `close()`. */
export function sqlFromPglite(db: PGlite, owned = false): Sql {
  return new PgliteSql(db, owned);
}
