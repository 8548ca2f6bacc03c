/**
 * @module Test helpers: the Redis test support of `@parley/adapter-redis` (finding the shared
 * server, skipping loudly or failing under `CI=true`, per-test prefixes, private servers), reused
 * by the HTTP tests rather than rewritten. Not built.
 */
export { REDIS_URL, countPrefix, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../../../adapter-redis/test/redis-available.js';
export { freePort as freeRedisPort, probeRedisBinaries, startRedisServer, tempDir, type RedisProcess } from '../../../adapter-redis/test/redis-server.js';
