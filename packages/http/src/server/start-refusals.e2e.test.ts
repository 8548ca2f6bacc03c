/**
 * @module `parley` against backends that refuse it or may lose its records (docs/operations.md):
 * a `REDIS_URL` naming a database Redis does not have and a `DATABASE_URL` naming a database
 * PostgreSQL does not have fail at once with the server's own message; Redis that may evict or
 * lose records gets a warning at start naming the risk. Real servers throughout.
 */
import {
  freePort,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '@parley/adapter-redis/testing';
import { POSTGRES_ADMIN_URL, probePostgres } from '@parley/adapter-postgres/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REDIS_URL, describeIfAvailable, probeRedis } from '../test-support/redis.js';
import { runCli, startServerProcess } from '../test-support/server-process.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());
const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());
const describePostgres = describeIfAvailable('PostgreSQL', await probePostgres());

/** Far below the 10 s start-up used to wait for the store. */
const AT_ONCE_MS = 5_000;
const KEYS = JSON.stringify([{ key: 'refusals-key-0001', workspace: 'acme', plan: 'pro' }]);

/**
 * `run`'s result and how long it took beyond Node's own start-up and module loading, measured by
 * a `parley --version` run just before it (a loaded test machine stretches those to seconds).
 */
async function timed<T>(run: () => Promise<T>): Promise<T & { ms: number }> {
  const versionStarted = Date.now();
  await runCli(['--version']);
  const startUp = Date.now() - versionStarted;
  const started = Date.now();
  const result = await run();
  return { ...result, ms: Date.now() - started - startUp };
}

describeRedis('REDIS_URL naming a database Redis does not have', () => {
  const missing = `${REDIS_URL.replace(/\/\d*$/, '')}/99`;

  it("parley serve exits at once with the server's message, serving nothing", async () => {
    const result = await timed(() => runCli(['serve', '--port', '0'], { REDIS_URL: missing, API_KEYS: KEYS }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused the connection: ERR DB index is out of range/);
    expect(result.stdout).not.toContain('listening');
    expect(result.ms).toBeLessThan(AT_ONCE_MS);
  });

  it('parley keys list fails the same way instead of printing an empty table', async () => {
    const result = await timed(() => runCli(['keys', 'list'], { REDIS_URL: missing }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/ERR DB index is out of range/);
    expect(result.ms).toBeLessThan(AT_ONCE_MS);
  });
});

describePostgres('DATABASE_URL naming a database PostgreSQL does not have', () => {
  it("parley serve exits at once with the server's message", async () => {
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = '/parley_no_such_database';
    const result = await timed(() =>
      runCli(['serve', '--port', '0'], { DATABASE_URL: url.toString(), API_KEYS: KEYS }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused the connection: database "parley_no_such_database" does not exist/);
    expect(result.stderr).not.toMatch(/did not answer/);
    expect(result.ms).toBeLessThan(AT_ONCE_MS);
  });
});

describeServer("Redis that may evict or lose Parley's records", () => {
  const temp = tempDir('start-warnings');
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedisServer(await freePort(), temp.dir, [
      '--maxmemory',
      '64mb',
      '--maxmemory-policy',
      'volatile-lru',
    ]);
  }, 30_000);
  afterAll(async () => {
    await redis.kill();
    temp.remove();
  });

  it('parley serve starts and warns naming each risk', async () => {
    const server = await startServerProcess({ REDIS_URL: redis.url, API_KEYS: KEYS });
    try {
      await expect
        .poll(() => server.output(), { timeout: 5_000 })
        .toMatch(/maxmemory-policy is volatile-lru: .*evicted/);
      expect(server.output()).toMatch(/neither AOF nor RDB persistence .*loses every Parley record/);
    } finally {
      await server.stop();
    }
  });
});
