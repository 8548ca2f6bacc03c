/**
 * @module @parley/adapter-postgres/testing: what PostgreSQL-backed tests share — a throwaway
 * database per run on the shared server (skip loudly, or fail under `CI=true`) and PGlite
 * instances in memory or in a temporary folder.
 */
export * from './postgres-available.js';
