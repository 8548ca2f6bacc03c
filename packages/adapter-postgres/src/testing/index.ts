/**
 * @module @parley/adapter-postgres/testing: what PostgreSQL-backed tests share — a throwaway
 * database per run on the shared server (skip loudly, or fail under `CI=true`), PGlite
 * instances in memory or in a temporary folder, and private servers a test may stop and pause.
 */
export * from './postgres-available.js';
export * from './private-postgres.js';
