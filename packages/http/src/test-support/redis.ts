/**
 * @module Test helpers: the Redis test support of `@parley/adapter-redis/testing` (finding the
 * shared server, skipping loudly or failing under `CI=true`, per-test prefixes, private servers),
 * reused by the HTTP tests rather than rewritten, with `describeIfAvailable` bound to vitest. Not built.
 */
import { describeIfAvailable as describeWith } from '@parley/adapter-redis/testing';
import { describe, it } from 'vitest';

export { REDIS_URL, countPrefix, deletePrefix, probeRedis, uniquePrefix } from '@parley/adapter-redis/testing';
export {
  freePort as freeRedisPort,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '@parley/adapter-redis/testing';

/**
 * A loopback TCP port nothing listens on for the whole test run, for "Redis does not answer" tests:
 * below 1024, so it is never handed out as an ephemeral port to another test's server (a port
 * found free and closed again can be taken before the test connects to it).
 */
export const CLOSED_PORT = 1;

/** `describe` when `problem` is `null`, else `describe.skip` (failing under `CI=true`). */
export function describeIfAvailable(what: string, problem: string | null) {
  return describeWith({ describe, it }, what, problem);
}
