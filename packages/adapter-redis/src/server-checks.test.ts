/**
 * @module Start-up against Redis servers that refuse the connection or may lose Parley's records:
 * `ready()` fails at once with the server's own message, or warns naming the risk. Real servers:
 * the shared one (database 99 does not exist there) and private ones with such settings.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisAdapters } from './redis-adapters.js';
import {
  REDIS_URL,
  describeIfAvailable,
  freePort,
  probeRedis,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '../test/redis-available.js';

const describeShared = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());
const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

/** Well under the 10 s `ready()` would otherwise wait. */
const AT_ONCE_MS = 2_000;

/** `ready()`'s rejection and how long it took; the adapters closed. */
async function start(url: string, warnings: string[] = []): Promise<{ error: Error | undefined; ms: number }> {
  const logger = { debug() {}, info() {}, warn: (_fields: object, message: string) => void warnings.push(message) };
  const adapters = redisAdapters({ url, prefix: 'parley-checks:', logger });
  const started = Date.now();
  try {
    await adapters.ready(10_000);
    return { error: undefined, ms: Date.now() - started };
  } catch (error) {
    return { error: error as Error, ms: Date.now() - started };
  } finally {
    await adapters.close();
  }
}

describeShared('ready() on a database that does not exist', () => {
  it("fails at once with the server's message instead of writing into database 0", async () => {
    const { error, ms } = await start(`${REDIS_URL.replace(/\/\d*$/, '')}/99`);
    expect(error?.message).toMatch(/refused the connection: ERR DB index is out of range/);
    expect(ms).toBeLessThan(AT_ONCE_MS);
  });
});

describeServer('ready() on servers of other settings', () => {
  const temp = tempDir('server-checks');
  const servers: RedisProcess[] = [];
  let guarded: RedisProcess;
  let evicting: RedisProcess;
  let durable: RedisProcess;
  beforeAll(async () => {
    guarded = await startRedisServer(await freePort(), temp.dir);
    // Set once it answers (the start-up check pings without a password).
    const admin = new Redis(guarded.url);
    await admin.config('SET', 'requirepass', 'right-password');
    admin.disconnect();
    evicting = await startRedisServer(await freePort(), temp.dir, [
      '--maxmemory',
      '100mb',
      '--maxmemory-policy',
      'allkeys-lru',
    ]);
    durable = await startRedisServer(await freePort(), temp.dir, [
      '--appendonly',
      'yes',
      '--appendfilename',
      'checks.aof',
    ]);
    servers.push(guarded, evicting, durable);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.kill()));
    temp.remove();
  });

  it("a wrong password or none fails at once with the server's message, never the password", async () => {
    const wrong = await start(`redis://:wrong-password@127.0.0.1:${guarded.port}`);
    expect(wrong.error?.message).toMatch(/refused the connection: WRONGPASS/);
    expect(wrong.error?.message).not.toContain('wrong-password');
    expect(wrong.ms).toBeLessThan(AT_ONCE_MS);
    const none = await start(guarded.url);
    expect(none.error?.message).toMatch(/refused the connection: NOAUTH/);
    expect(none.ms).toBeLessThan(AT_ONCE_MS);
    expect((await start(`redis://:right-password@127.0.0.1:${guarded.port}`)).error).toBeUndefined();
  });

  it("warns when Redis may evict Parley's records or keeps none on disk, and not when it keeps them", async () => {
    const warnings: string[] = [];
    expect((await start(evicting.url, warnings)).error).toBeUndefined();
    expect(warnings).toEqual([
      expect.stringMatching(/maxmemory-policy is allkeys-lru: .*Parley's records .* are evicted/),
      expect.stringMatching(/neither AOF nor RDB persistence .*: a restart of Redis loses every Parley record/),
    ]);
    const none: string[] = [];
    expect((await start(durable.url, none)).error).toBeUndefined();
    expect(none).toEqual([]);
  });
});
