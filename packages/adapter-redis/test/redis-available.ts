/** @module This package's tests: `@parley/adapter-redis/testing` with `describeIfAvailable` bound to vitest. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { describeIfAvailable as describeWith } from '../src/testing/redis-available.js';
import { freePort, startRedisServer, tempDir, type RedisProcess } from '../src/testing/redis-server.js';

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

/**
 * A redis-server of the calling suite's own, started in its `beforeAll` and killed in its
 * `afterAll` (after the suite's later `afterAll`s, which close its clients): its `url`, an `admin`
 * client, and `calls(command)` ({@link commandCalls}), which no other test's commands disturb.
 */
export function privateRedisServer(name: string): {
  readonly url: string;
  readonly admin: Redis;
  calls(command: string): Promise<number>;
} {
  const temp = tempDir(name);
  let server: RedisProcess | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer(await freePort(), temp.dir);
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.kill();
    temp.remove();
  });
  return {
    get url() {
      return server!.url;
    },
    get admin() {
      return admin!;
    },
    calls: (command) => commandCalls(admin!, command),
  };
}
