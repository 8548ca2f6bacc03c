/**
 * @module The backend the ready-made server runs on: one adapter factory picked by configuration
 * (docs/storage.md). Memory comes with `@parley/http`; Redis and PostgreSQL are imported when
 * configured, from the adapter package installed beside it (docs/installing.md). Adding a backend
 * is adding a branch here that returns its `Adapters` bundle.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import type { Adapters } from '@parley/core';
import { importPostgresAdapter, importRedisAdapter } from './adapter-packages.js';
import type { DatabaseConfig } from '../cli/database-config.js';
import type { Logger } from '../app/logger.js';
import type { RedisConfig } from '../cli/redis-config.js';

/**
 * Deadline of one Redis round trip made by the server, in ms. Half the adapters' 1 000 ms default
 * so that a request whose Redis call hangs still answers 503 within a second with room to spare
 * for HTTP and a busy event loop; healthy Redis answers in about a millisecond.
 */
export const SERVER_REDIS_TIMEOUT_MS = 500;

/** Where the server's data lives: `redis` picks Redis, `database` PostgreSQL or PGlite, nothing memory. */
export interface BackendConfig {
  redis?: RedisConfig | undefined;
  database?: DatabaseConfig | undefined;
  /** How long events and the deliveries log are kept, in days (`EVENT_RETENTION_DAYS`); default the adapters' 14. */
  eventRetentionDays?: number | undefined;
}

/** Options of {@link openAdapters}. */
export interface BackendOptions {
  /** Where connection changes are logged. */
  logger?: Logger;
  /** Deadline of one backend call in ms; default {@link SERVER_REDIS_TIMEOUT_MS} (Redis), {@link SERVER_DATABASE_TIMEOUT_MS} (PostgreSQL). */
  timeoutMs?: number;
}

/**
 * Client-side deadline of one PostgreSQL statement made by the server, in ms: a database that
 * stops answering fails the request with 503 within a second (with the rate limiter's 250 ms),
 * while a healthy one answers the API's indexed statements in milliseconds. Migrations at start-up
 * run in a transaction, which has no such deadline (DATABASE_STATEMENT_TIMEOUT_MS still applies).
 */
export const SERVER_DATABASE_TIMEOUT_MS = 700;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The adapter bundle `config` names: memory, Redis (standalone or Cluster) over a client of its
 * own, or PostgreSQL (a pool of its own, or PGlite in `DATA_DIR`, locked to this process).
 * @throws MissingAdapterError when the package of the configured Redis or PostgreSQL backend is not installed
 */
export async function openAdapters(config: BackendConfig, options: BackendOptions = {}): Promise<Adapters> {
  const eventRetentionMs = config.eventRetentionDays === undefined ? undefined : config.eventRetentionDays * DAY_MS;
  if (config.database !== undefined)
    return openDatabase(config.database, eventRetentionMs, options.timeoutMs ?? SERVER_DATABASE_TIMEOUT_MS);
  if (config.redis === undefined)
    return memoryAdapters(eventRetentionMs === undefined ? {} : { storage: { eventRetentionMs } });
  const { redis } = config;
  const { redisAdapters } = await importRedisAdapter(redis);
  return redisAdapters({
    ...('url' in redis ? { url: redis.url } : { clusterNodes: redis.clusterNodes }),
    prefix: redis.prefix,
    timeoutMs: options.timeoutMs ?? SERVER_REDIS_TIMEOUT_MS,
    ...(eventRetentionMs !== undefined && { eventRetentionMs }),
    ...(options.logger && { logger: options.logger }),
  });
}

/** `postgresAdapters()` over the server's variables (docs/storage.md). */
async function openDatabase(
  database: DatabaseConfig,
  eventRetentionMs: number | undefined,
  queryTimeoutMs: number,
): Promise<Adapters> {
  const { migrate, schema, poolSize, statementTimeoutMs, listenUrl } = database;
  const { postgresAdapters } = await importPostgresAdapter(database);
  return postgresAdapters({
    ...('dataDir' in database ? { dataDir: database.dataDir } : { connectionString: database.connectionString }),
    schema,
    migrations: migrate,
    queryTimeoutMs,
    ...(poolSize !== undefined && { poolSize }),
    ...(statementTimeoutMs !== undefined && { statementTimeoutMs }),
    ...(listenUrl !== undefined && { listenConnectionString: listenUrl }),
    ...(eventRetentionMs !== undefined && { eventRetentionMs }),
  });
}
