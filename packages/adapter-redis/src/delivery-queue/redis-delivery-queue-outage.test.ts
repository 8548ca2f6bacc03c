/**
 * @module RedisDeliveryQueue through faults of a private redis-server: a lease waiting on its
 * blocking connection rejects with `service_unavailable` when the server hangs or dies, and the
 * same queue works again once the server is back — groups recreated when its data was lost.
 */
import { ErrorCode, isParleyError } from '@parley/core';
import { contractJob } from '@parley/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeIfAvailable } from '../../test/redis-available.js';
import {
  freePort,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '../../test/redis-available.js';
import { RedisDeliveryQueue } from './redis-delivery-queue.js';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => new Error('resolved'),
    (error: unknown) => error,
  );
}

/** Retries `call` every 100 ms until it resolves (the client reconnecting), for up to 10 s. */
async function eventually<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describeServer('RedisDeliveryQueue through a Redis outage', () => {
  const temp = tempDir('queue-outage');
  let port: number;
  let server: RedisProcess | undefined;
  let queue: RedisDeliveryQueue;

  beforeAll(async () => {
    port = await freePort();
    server = await startRedisServer(port, temp.dir);
    queue = new RedisDeliveryQueue({ url: server.url, prefix: 'parley-queue-outage:', timeoutMs: 500, leaseMs: 2_000 });
  });

  afterAll(async () => {
    server?.resume();
    await queue?.close();
    await server?.kill();
    temp.remove();
  });

  it('a waiting lease rejects with service_unavailable when the server hangs, and the queue serves again after', async () => {
    await queue.enqueue([contractJob(1)]);
    const [first] = await queue.lease('first', 1, 0);
    await queue.ack(first!);
    const waiting = rejection(queue.lease('first', 1, 10_000));
    await new Promise((resolve) => setTimeout(resolve, 200));
    server!.pause();
    try {
      const error = await waiting;
      expect(isParleyError(error, ErrorCode.serviceUnavailable), String(error)).toBe(true);
      expect(isParleyError(await rejection(queue.stats()), ErrorCode.serviceUnavailable)).toBe(true);
    } finally {
      server!.resume();
    }
    const job = contractJob(2);
    await eventually(() => queue.enqueue([job]));
    expect((await eventually(() => queue.lease('first', 1, 2_000))).map((item) => item.job)).toEqual([job]);
  });

  it('after the server died and came back empty, the same queue recreates its streams and groups', async () => {
    await server!.kill();
    expect(isParleyError(await rejection(queue.lease('retry', 1, 1_000)), ErrorCode.serviceUnavailable)).toBe(true);
    server = await startRedisServer(port, temp.dir);
    const job = contractJob(3);
    await eventually(() => queue.enqueue([job]));
    const [leased] = await eventually(() => queue.lease('first', 1, 2_000));
    expect(leased!.job).toEqual(job);
    await queue.retry(leased!, { ...job, attempt: 2 }, Date.now());
    expect((await queue.lease('retry', 1, 2_000)).map((item) => item.job)).toEqual([{ ...job, attempt: 2 }]);
  });
});
