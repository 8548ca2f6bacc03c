/**
 * @module @parley/adapter-redis/testing: what Redis-backed tests share — finding the shared
 * server (skip loudly, or fail under `CI=true`), throwaway key prefixes, and private
 * `redis-server` processes and Clusters. Needs `redis-server`/`redis-cli` for the latter.
 */
export * from './redis-available.js';
export * from './redis-server.js';
