/** @module This package's tests: `@parley/adapter-redis/testing` with `describeIfAvailable` bound to vitest. */
import type { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { describeIfAvailable as describeWith } from '../src/testing/redis-available.js';

export * from '../src/testing/redis-available.js';
export * from '../src/testing/redis-server.js';

/** `describe` when `problem` is `null`, else `describe.skip` (failing under `CI=true`); see `src/testing`. */
export function describeIfAvailable(what: string, problem: string | null) {
  return describeWith({ describe, it }, what, problem);
}

/**
 * How many times `command` (lower case, e.g. `xack`) has run on `client`'s server since it
 * started, scripts' commands included (`INFO commandstats`). Meant for a private redis-server,
 * whose counts no other test shares.
 */
export async function commandCalls(client: Redis, command: string): Promise<number> {
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await client.info('commandstats'))?.[1] ?? 0);
}
