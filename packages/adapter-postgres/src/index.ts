/** @module @parley/adapter-postgres: Parley's ports on PostgreSQL (node-postgres) and on embedded PGlite. */
export { type Row, type Sql, sqlFromPglite, sqlFromPool, PG_POOL_TYPES } from './sql.js';
export { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
export { checkSchema, loadMigrations, migrate, SchemaVersionError, type MigrateResult, type Migration } from './migrate.js';
export * from './queues/index.js';
