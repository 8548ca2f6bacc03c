/** @module @parley/adapter-postgres: Parley's ports on PostgreSQL (node-postgres) and on embedded PGlite. */
export {
  type PgliteDatabase,
  type PgliteParsers,
  type PgliteQueryable,
  type Row,
  type Sql,
  sqlFromPglite,
  sqlFromPool,
  PG_POOL_TYPES,
} from './sql.js';
export { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
export {
  checkSchema,
  loadMigrations,
  migrate,
  SchemaVersionError,
  type MigrateResult,
  type Migration,
} from './migrate.js';
export * from './queues/index.js';
export { PostgresStorage, type PostgresStorageOptions } from './postgres-storage.js';
export { PostgresApiKeyStore, type PostgresApiKeyStoreOptions } from './postgres-api-keys.js';
export { PostgresRateLimitStore, type PostgresRateLimitStoreOptions } from './postgres-rate-limits.js';
export { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from './postgres-idempotency.js';
export {
  migrateDatabase,
  postgresAdapters,
  type PostgresAdapters,
  type PostgresAdaptersOptions,
  type PostgresTarget,
} from './create-postgres-adapters.js';
export { DataDirLockedError, lockDataDir, LOCK_FILE, NotADataDirError } from './data-dir-lock.js';
export { PGLITE_SHARED_BUFFERS, PGLITE_START_PARAMS, PGLITE_V8_FLAGS } from './embedded.js';
export { sweep, SWEEP_BATCH } from './sweep.js';
export { isConnectionFault, redactPostgresError } from './faults.js';
