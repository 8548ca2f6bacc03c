/**
 * @module PostgreSQL faults under load: a real `parley serve` on a private PostgreSQL server behind
 * a latency-adding TCP proxy, with 8 clients writing and reading and every webhook delivery
 * hanging at its receiver. The database slowed past the pool's deadlines, paused (SIGSTOP of every
 * server process), and stopped then started again: every request answers within a bound (503
 * during the fault), every acknowledged write reads back, deliveries go on, and the same process
 * recovers after each fault by itself.
 */
import { eventually, startReceiver, type Receiver } from '@parley/core/testing';
import { probePostgresBinaries, startPrivatePostgres, type PrivatePostgres } from '@parley/adapter-postgres/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLatencyProxy, type LatencyProxy } from '../test-support/latency-proxy.js';
import { describeIfAvailable } from '../test-support/redis.js';
import { faultsLoad } from '../test-support/faults-load.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const describeServer = describeIfAvailable('A private PostgreSQL server', await probePostgresBinaries());

const KEY = 'pg-faults-under-load-key-012345';
const CLIENTS = 8;
/**
 * Every request answers within this, fault or not: a database outage answers 503 within 1 s
 * (docs/storage.md), with room for a loaded machine — the same bound as on Redis.
 */
const ANSWER_WITHIN_MS = 2_500;

describeServer('parley serve under load through PostgreSQL faults', () => {
  let database: PrivatePostgres;
  let proxy: LatencyProxy;
  let server: ServerProcess;
  let receiver: Receiver;

  beforeAll(async () => {
    database = await startPrivatePostgres();
    proxy = await startLatencyProxy(Number(new URL(database.url).port));
    receiver = await startReceiver();
    receiver.answer = () => 'hang';
    server = await startServerProcess({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
  });
  afterAll(async () => {
    database?.pause(false);
    await server?.stop('SIGKILL');
    await receiver?.release(200);
    await receiver?.close();
    await proxy?.close();
    await database?.destroy();
  });

  const { samples, call, load, recovered, failedFast, acknowledgedReadBack } = faultsLoad({
    server: () => server,
    key: KEY,
    clients: CLIENTS,
    callTimeoutMs: 30_000,
    recoverWithinMs: 20_000,
  });

  it(
    'slowed, paused, restarted: 503 in bounded time, nothing acknowledged lost, recovery without a restart of Parley',
    { timeout: 150_000 },
    async () => {
      await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] });
      await recovered('hanging receiver');
      expect(receiver.hanging()).toBeGreaterThan(0);

      proxy.delayMs = 1_500; // past the 1 s deadline of a database call
      failedFast('slowed', await load('slowed', 1_500));
      proxy.delayMs = 0;
      await recovered('after slowed');

      database.pause(true);
      failedFast('paused', await load('paused', 2_000));
      database.pause(false);
      await recovered('after paused');

      await database.stop();
      failedFast('stopped', await load('stopped', 1_500));
      await database.start();
      await recovered('after restarted');
      await acknowledgedReadBack();

      // Delivery goes on: the receiver answers again (the attempts it held too), and a new agent's
      // event arrives, behind the backlog of the agents created under load.
      receiver.answer = () => 200;
      await receiver.release(200);
      const last = await call('POST', '/api/agents', {
        name: 'After the faults',
        description: 'Delivered',
        model: 'modelA-4',
      });
      expect(last.status).toBe(201);
      await eventually(
        () => receiver.received.some((webhook) => webhook.json.data.id === last.body.id),
        30_000,
        'delivery after PostgreSQL restarted',
      );

      const slow = samples.filter((sample) => sample.elapsedMs > ANSWER_WITHIN_MS);
      expect(slow, `every request answered within ${ANSWER_WITHIN_MS} ms`).toEqual([]);
      await receiver.release(200);
      expect(await server.stop('SIGTERM')).toBe(0);
    },
  );
});
