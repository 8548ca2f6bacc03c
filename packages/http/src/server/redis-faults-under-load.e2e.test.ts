/**
 * @module Redis faults under load (README "Security and reliability"): a real `parley serve` on a
 * private redis-server (AOF, `appendfsync always`) behind a latency-adding TCP proxy, with 8
 * clients writing and reading and every webhook delivery hanging at its receiver. Redis slowed past
 * the call deadline, paused (`CLIENT PAUSE`), stopped, and restarted empty: every request answers
 * within a bound (503 during the fault), every acknowledged write reads back, and the same process
 * recovers after each fault by itself.
 */
import { eventually, startReceiver, type Receiver } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLatencyProxy, type LatencyProxy } from '../test-support/latency-proxy.js';
import {
  describeIfAvailable,
  freeRedisPort,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '../test-support/redis.js';
import { faultsLoad } from '../test-support/faults-load.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

const KEY = 'faults-under-load-key-0123456789';
const CLIENTS = 8;
/**
 * Every request answers within this, fault or not: a Redis call's deadline is 500 ms, and the
 * first failing call answers the request (about 0.6 s measured), with room for a loaded machine.
 */
const ANSWER_WITHIN_MS = 2_500;
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];

/** One request of the load. */

describeServer('parley serve under load through Redis faults', () => {
  const dirs = [tempDir('faults-load'), tempDir('faults-load-empty')];
  let redisPort: number;
  let redis: RedisProcess | undefined;
  let proxy: LatencyProxy;
  let server: ServerProcess;
  let receiver: Receiver;

  beforeAll(async () => {
    redisPort = await freeRedisPort();
    redis = await startRedisServer(redisPort, dirs[0]!.dir, PERSISTENT);
    proxy = await startLatencyProxy(redisPort);
    receiver = await startReceiver();
    receiver.answer = () => 'hang';
    server = await startServerProcess({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.release(200);
    await receiver?.close();
    await proxy?.close();
    await redis?.kill();
    for (const dir of dirs) dir.remove();
  });

  const { samples, call, load, recovered, failedFast, acknowledgedReadBack } = faultsLoad({
    server: () => server,
    key: KEY,
    clients: CLIENTS,
    callTimeoutMs: 20_000,
    recoverWithinMs: 15_000,
  });

  it(
    'slowed, paused, stopped, restarted empty: 503 in bounded time, nothing acknowledged lost, recovery without a restart',
    { timeout: 90_000 },
    async () => {
      await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] });
      // Every delivery hangs at the receiver from here on; the API must not notice.
      await recovered('hanging receiver');
      expect(receiver.hanging()).toBeGreaterThan(0);

      proxy.delayMs = 1_500; // past the 500 ms call deadline
      failedFast('slowed', await load('slowed', 1_500));
      proxy.delayMs = 0;
      await recovered('after slowed');

      const admin = new Redis(redis!.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      await admin.connect();
      await admin.call('CLIENT', 'PAUSE', '2000', 'ALL');
      failedFast('paused', await load('paused', 1_500));
      admin.disconnect();
      await recovered('after paused');

      await redis!.kill();
      failedFast('stopped', await load('stopped', 1_500));
      redis = await startRedisServer(redisPort, dirs[0]!.dir, PERSISTENT);
      await recovered('after stopped');
      await acknowledgedReadBack();

      await redis.kill();
      redis = await startRedisServer(redisPort, dirs[1]!.dir, PERSISTENT);
      await recovered('after restarted empty');
      // Delivery recovers too: a new endpoint on the empty Redis gets its event.
      receiver.answer = () => 200;
      await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] });
      const last = await call('POST', '/api/agents', {
        name: 'After the faults',
        description: 'Delivered',
        model: 'modelA-4',
      });
      await eventually(
        () => receiver.received.some((webhook) => webhook.json.data.id === last.body.id),
        15_000,
        'delivery after Redis restarted empty',
      );

      const slow = samples.filter((sample) => sample.elapsedMs > ANSWER_WITHIN_MS);
      expect(slow, `every request answered within ${ANSWER_WITHIN_MS} ms`).toEqual([]);
      await receiver.release(200);
      expect(await server.stop('SIGTERM')).toBe(0);
    },
  );
});
