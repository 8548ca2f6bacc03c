/**
 * @module Test support for the queues: a fresh migrated schema per test on a shared PostgreSQL
 * database or PGlite instance, and "processes" over it — each with its own pool (or, on PGlite,
 * the one instance) and its own LISTEN connection, as separate worker processes would have.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { migrate } from '../src/migrate.js';
import { createTestDatabase, createTestPglite, describeIfPostgres, probePostgres } from '../src/testing/index.js';
import { type PgliteDatabase, type Sql, sqlFromPglite, sqlFromPool } from '../src/sql.js';
import { type Notifier, PgliteNotifier, PgNotifier } from '../src/queues/notifier.js';

/** A statement a {@link recording} `Sql` ran: its text and parameters. */
export interface Statement {
  text: string;
  params: readonly unknown[];
}

/** `sql`, keeping each statement it runs outside a transaction in `statements` (to `EXPLAIN` it again). */
export function recording(sql: Sql): { sql: Sql; statements: Statement[] } {
  const statements: Statement[] = [];
  return {
    statements,
    sql: {
      query: (text, params = []) => (statements.push({ text, params }), sql.query(text, params)),
      exec: (script) => sql.exec(script),
      transaction: (work) => sql.transaction(work),
      close: () => sql.close(),
    },
  };
}

/** Thrown to roll back the transaction {@link analyzedPlan} ran its statement in. */
class Rollback extends Error {
  constructor(readonly plan: unknown) {
    super('rolled back');
  }
}

/**
 * The nodes, depth first (init plans and sub plans included), of `EXPLAIN (ANALYZE, BUFFERS,
 * FORMAT JSON)` of `statement`, run in a transaction that is rolled back: a write's plan without its
 * effect. A node's `Shared Hit Blocks` + `Shared Read Blocks` are the pages it and its children read
 * (a function's node: what its body read). `settings` are set for that transaction (`SET LOCAL`).
 */
export async function analyzedPlan(
  sql: Sql,
  { text, params }: Statement,
  settings: Record<string, string> = {},
): Promise<Array<Record<string, unknown>>> {
  const raw = await sql
    .transaction(async (tx) => {
      for (const [name, value] of Object.entries(settings)) await tx.query(`SET LOCAL ${name} = ${value}`);
      const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
        params,
      );
      throw new Rollback(row!['QUERY PLAN']);
    })
    .catch((error: unknown) => {
      if (error instanceof Rollback) return error.plan;
      throw error;
    });
  const [root] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: Record<string, unknown> }>;
  const nodes = (plan: Record<string, unknown>): Array<Record<string, unknown>> => [
    plan,
    ...((plan.Plans as Array<Record<string, unknown>> | undefined) ?? []).flatMap(nodes),
  ];
  return nodes(root!.Plan);
}

/** One simulated process: its `Sql` and its notifier (`null` when opened without LISTEN). */
export interface TestProcess {
  sql: Sql;
  notifier: Notifier | null;
}

/** Where tests run: PostgreSQL at a URL (a database made for the run) or a PGlite instance. */
export type TestBackend = { kind: 'postgres'; url: string } | { kind: 'pglite'; db: PgliteDatabase };

/** A fresh schema, the processes opened over it, and `cleanup` closing them and dropping the schema. */
export interface TestSchema {
  schema: string;
  open(options?: { listen?: boolean }): TestProcess;
  cleanup(): Promise<void>;
}

/** Creates and migrates a schema `q_<random>` on `backend`. */
export async function openTestSchema(backend: TestBackend): Promise<TestSchema> {
  const schema = `q_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const closers: Array<() => Promise<void>> = [];
  const open = ({ listen = true } = {}): TestProcess => {
    if (backend.kind === 'pglite') {
      const notifier = listen ? new PgliteNotifier(backend.db) : null;
      if (notifier) closers.push(() => notifier.close());
      return { sql: sqlFromPglite(backend.db), notifier };
    }
    const pool = new pg.Pool({ connectionString: backend.url, max: 4 });
    pool.on('error', () => {});
    const notifier = listen ? new PgNotifier({ connection: { connectionString: backend.url } }) : null;
    closers.push(async () => {
      await notifier?.close();
      await pool.end();
    });
    return { sql: sqlFromPool(pool), notifier };
  };
  const admin = open({ listen: false });
  await migrate(admin.sql, schema);
  return {
    schema,
    open,
    cleanup: async () => {
      await admin.sql.query(`DROP SCHEMA ${schema} CASCADE`);
      for (const close of closers.reverse()) await close();
    },
  };
}

/**
 * Registers `body` once on PostgreSQL (a database made for the file's run; skipped loudly, or
 * failing under CI, when the server is away) and once on an in-memory PGlite.
 */
export async function onEachBackend(
  title: string,
  body: (backend: () => TestBackend, kind: TestBackend['kind']) => void,
): Promise<void> {
  const problem = await probePostgres();
  describeIfPostgres({ describe, it }, problem)(`${title} on PostgreSQL`, () => {
    let url = '';
    let drop: () => Promise<void> = async () => {};
    beforeAll(async () => {
      const database = await createTestDatabase();
      url = database.url;
      drop = database.drop;
    });
    afterAll(() => drop());
    body(() => ({ kind: 'postgres', url }), 'postgres');
  });
  describe(`${title} on PGlite`, () => {
    let db: PgliteDatabase | undefined;
    let close: () => Promise<void> = async () => {};
    beforeAll(async () => {
      const pglite = await createTestPglite();
      db = pglite.db;
      close = pglite.close;
    });
    afterAll(() => close());
    body(() => ({ kind: 'pglite', db: db! }), 'pglite');
  });
}
