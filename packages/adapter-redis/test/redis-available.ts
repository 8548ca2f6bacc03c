/** @module This package's tests: `@parley/adapter-redis/testing` with `describeIfAvailable` bound to vitest. */
import { describe, it } from 'vitest';
import { describeIfAvailable as describeWith } from '../src/testing/redis-available.js';

export * from '../src/testing/redis-available.js';
export * from '../src/testing/redis-server.js';

/** `describe` when `problem` is `null`, else `describe.skip` (failing under `CI=true`); see `src/testing`. */
export function describeIfAvailable(what: string, problem: string | null) {
  return describeWith({ describe, it }, what, problem);
}
