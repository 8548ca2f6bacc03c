/**
 * @module `postgresAdapters()`: core's whole `Adapters` bundle on PostgreSQL (a connection string
 * or the host's `pg.Pool`) or on embedded PGlite (a data folder, or the host's instance).
 */
import { DEFAULT_EVENT_RETENTION_MS, type Adapters } from '@parley/core/adapter';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.js';
import { openDataDir } from './embedded.js';
import { connectionRefusal } from './faults.js';
import { checkSchema, migrate, type MigrateResult } from './migrate.js';
import { PostgresApiKeyStore } from './postgres-api-keys.js';
import { PostgresIdempotencyStore } from './postgres-idempotency.js';
import { PostgresRateLimitStore } from './postgres-rate-limits.js';
import { PostgresStorage } from './postgres-storage.js';
import { createPostgresQueues, type ListenOptions } from './queues/index.js';
import { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
import { type PgliteDatabase, type Sql, sqlFromPglite, sqlFromPool } from './sql.js';
import { sweep } from './sweep.js';

/** Where the data lives: a server (URL or the host's pool) or embedded PGlite (folder or instance). */
export type PostgresTarget =
  { connectionString: string } | { pool: pg.Pool } | { dataDir: string } | { pglite: PgliteDatabase };

/** Options of {@link postgresAdapters}; all but the target have defaults. */
export type PostgresAdaptersOptions = PostgresTarget & {
  /** The schema holding every table (`PARLEY_SCHEMA`); default `parley`. */
  schema?: string;
  /** Connections in the pool this package creates (`DATABASE_POOL_SIZE`); default 10. */
  poolSize?: number;
  /** Server-side `statement_timeout` of those connections, in ms (`DATABASE_STATEMENT_TIMEOUT_MS`); default 5 000. */
  statementTimeoutMs?: number;
  /** How long to wait for a connection from the pool before answering 503, in ms; default 1 000. */
  connectionTimeoutMs?: number;
  /**
   * Client-side deadline of one statement outside a transaction, in ms, as node-postgres's
   * `query_timeout` but not counting stalls of this process: a database that stops answering
   * (paused, network cut) fails the call with `service_unavailable` after this instead of at the
   * statement timeout, and the connection is dropped. Default: none.
   */
  queryTimeoutMs?: number;
  /** `auto` (default): `ready()` applies pending migrations; `off`: `ready()` refuses an old schema. */
  migrations?: 'auto' | 'off';
  /** Events and delivery attempts are kept this long, in ms; default 14 days. */
  eventRetentionMs?: number;
  /** Outbox batch lease, in ms; default 30 000. */
  outboxLeaseMs?: number;
  /** Period of the retention sweep, in ms (0: none); default 60 000. */
  sweepIntervalMs?: number;
  /** A direct connection for LISTEN behind a transaction-mode pooler (`DATABASE_LISTEN_URL`); `false`: poll. */
  listenConnectionString?: string | false;
};

/** The bundle, plus the `Sql` it runs on, its schema and an explicit sweep. */
export interface PostgresAdapters extends Adapters {
  /** The connection every store queries through; a host may query its own tables with it too. */
  sql: Sql;
  /** The schema holding Parley's tables (a plain identifier: `quoteSchema` accepted it). */
  schema: string;
  /** Runs one retention sweep now; resolves with the number of rows deleted. */
  sweep(): Promise<number>;
  /** The pool this bundle queries through (`null` on PGlite), for pool metrics. */
  pool: pg.Pool | null;
}

/**
 * Connections of the rate limits' own pool (a pool this package creates only): one, since the
 * store sends one batch of hits at a time (postgres-rate-limits.ts).
 */
const RATE_LIMIT_POOL_SIZE = 1;

/**
 * Opens the connection the options name: what it is, and whether this bundle owns it. A new data
 * folder is migrated to `schema` as it is created (embedded.ts).
 */
function open(
  options: PostgresAdaptersOptions,
  schema: string,
): {
  sql: Sql;
  limitsSql: Sql;
  pool: pg.Pool | null;
  pglite: PgliteDatabase | null;
  listen: ListenOptions;
  description: string;
  release: () => void;
} {
  const none = () => {};
  if ('pglite' in options) {
    const sql = sqlFromPglite(options.pglite);
    return {
      sql,
      limitsSql: sql,
      pool: null,
      pglite: options.pglite,
      listen: { pglite: options.pglite },
      description: 'PGlite (host instance)',
      release: none,
    };
  }
  if ('dataDir' in options) {
    const release = lockDataDir(options.dataDir);
    // Sized for one embedded process, a new folder created and migrated in a child (embedded.ts, docs/storage.md).
    const pglite = openDataDir(options.dataDir, schema);
    const sql = sqlFromPglite(pglite, true);
    return {
      sql,
      limitsSql: sql,
      pool: null,
      pglite,
      listen: { pglite },
      description: `embedded PostgreSQL (PGlite) in ${options.dataDir}`,
      release,
    };
  }
  const owned = 'connectionString' in options;
  const settings: pg.PoolConfig = owned
    ? {
        connectionString: options.connectionString,
        max: options.poolSize ?? 10,
        statement_timeout: options.statementTimeoutMs ?? 5_000,
        connectionTimeoutMillis: options.connectionTimeoutMs ?? 1_000,
        application_name: 'parley',
      }
    : {};
  const pool = owned ? new pg.Pool(settings) : options.pool;
  // An idle connection the server dropped must not crash the process; the next query reconnects.
  if (owned) pool.on('error', () => {});
  const config = owned ? settings : (pool as unknown as { options: pg.PoolConfig }).options;
  const listen: ListenOptions =
    options.listenConnectionString === false
      ? false
      : options.listenConnectionString
        ? { connection: { connectionString: options.listenConnectionString } }
        : { connection: { ...config } as pg.ClientConfig };
  const url = owned ? new URL(options.connectionString) : null;
  const description = url
    ? `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`
    : 'PostgreSQL (host pool)';
  const timeouts = options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs };
  const sql = sqlFromPool(pool, owned, timeouts);
  // Rate-limit decisions have a 250 ms deadline (docs/rate-limits.md) and must not queue behind a
  // burst of writes for a pooled connection, or they fail open and admit more than the plan: a
  // pool of their own, small since each decision is one short upsert.
  const limitsSql = owned
    ? sqlFromPool(
        new pg.Pool({ ...settings, max: RATE_LIMIT_POOL_SIZE }).on('error', () => {}),
        true,
        timeouts,
      )
    : sql;
  return { sql, limitsSql, pool, pglite: null, listen, description, release: none };
}

/**
 * Every port Parley runs on, over one PostgreSQL database or PGlite folder: storage, API keys,
 * rate limits, idempotency, delivery and reply queues, the conversation feed. Call `ready()`
 * before serving: it waits for the database (failing at once, with the server's message, when
 * the database, role or TLS setting is wrong), then migrates (`migrations: 'auto'`) or checks the
 * schema version (`'off'`, throwing `SchemaVersionError` when behind or ahead). A `dataDir` must
 * be new, empty or a Parley data folder (`NotADataDirError` for a folder of other files) and is
 * locked to this process (`DataDirLockedError` when another live process holds it). `close()`
 * ends what this bundle opened (never a host's pool or PGlite instance).
 */
export function postgresAdapters(options: PostgresAdaptersOptions): PostgresAdapters {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  quoteSchema(schema); // refuses a bad name before anything is opened
  const { sql, limitsSql, pool, listen, description, release } = open(options, schema);
  const retentionMs = options.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS;
  const storage = new PostgresStorage({
    sql,
    schema,
    eventRetentionMs: retentionMs,
    outboxLeaseMs: options.outboxLeaseMs,
  });
  const queues = createPostgresQueues({ sql, schema, listen });
  const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  let prepared: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const embedded = 'dataDir' in options || 'pglite' in options;

  const prepare = async () => {
    if (options.migrations === 'off') await checkSchema(sql, schema);
    else await migrate(sql, schema);
    if (sweepIntervalMs > 0) {
      timer = setInterval(() => void sweep(sql, schema, retentionMs).catch(() => {}), sweepIntervalMs);
      timer.unref();
    }
  };

  return {
    sql,
    schema,
    pool,
    storage,
    apiKeys: new PostgresApiKeyStore({ sql, schema }),
    rateLimits: new PostgresRateLimitStore({ sql: limitsSql, schema }),
    idempotency: new PostgresIdempotencyStore({ sql, schema }),
    deliveryQueue: queues.deliveryQueue,
    replyQueue: queues.replyQueue,
    conversationFeed: queues.conversationFeed,
    info: {
      name: embedded ? 'PGlite' : 'PostgreSQL',
      description: `${description}, schema "${schema}"`,
      durable: true,
    },
    async ready(waitMs = 10_000) {
      const deadline = Date.now() + waitMs;
      let last: unknown;
      for (;;) {
        try {
          await storage.ping();
          break;
        } catch (error) {
          last = error;
          const refusal = connectionRefusal(error);
          if (refusal !== undefined) throw new Error(`${description} refused the connection: ${refusal}`);
          if (Date.now() >= deadline)
            throw new Error(
              `${description} did not answer within ${waitMs} ms: ${(last as { cause?: Error }).cause?.message ?? (last as Error).message}`,
            );
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      await (prepared ??= prepare().catch((error: unknown) => {
        prepared = undefined;
        throw error;
      }));
    },
    onReconnect(listener) {
      queues.notifier?.onReconnect(listener);
    },
    sweep: () => sweep(sql, schema, retentionMs),
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        await queues.close();
        await sql.close();
        if (limitsSql !== sql) await limitsSql.close();
        release();
      })()),
  };
}

/**
 * Applies the pending migrations of `options.schema` (default `parley`) on the database the
 * options name, under the advisory lock (`parley migrate`), and closes what it opened. A
 * `dataDir` is locked meanwhile (`DataDirLockedError` while a server holds it).
 * @throws SchemaVersionError when the database is newer than this code; ParleyError
 * `service_unavailable` when it does not answer
 */
export async function migrateDatabase(
  options: PostgresTarget & Pick<PostgresAdaptersOptions, 'schema' | 'connectionTimeoutMs'>,
): Promise<MigrateResult> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  quoteSchema(schema);
  const { sql, release } = open({ ...options, poolSize: 1, listenConnectionString: false }, schema);
  try {
    return await migrate(sql, schema);
  } finally {
    await sql.close();
    release();
  }
}
