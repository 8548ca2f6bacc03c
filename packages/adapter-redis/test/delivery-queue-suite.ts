/**
 * @module Test support: core's delivery queue contract and the Redis-specific queue tests, over a
 * client a test file provides (standalone or Cluster). Each queue instance gets a client of its
 * own (`duplicate()`), as separate worker processes would, under a fresh key prefix deleted afterwards.
 */
import type { DeliveryQueue, DeliveryQueueStats } from '@parley/core/adapter';
import { contractJob, runDeliveryQueueContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connection.js';
import { RedisDeliveryQueue } from '../src/delivery-queue/redis-delivery-queue.js';
import { deliveryQueueKeys } from '../src/keys.js';
import { countPrefix, deletePrefix, uniquePrefix } from './redis-available.js';

const EMPTY: DeliveryQueueStats = { first: 0, retry: 0, scheduled: 0, leased: 0 };

/** Queue instances over one prefix, each on its own duplicated client; `cleanup` closes all and deletes the keys. */
function queues(client: () => RedisClient, label: string, leaseMs: number) {
  const prefix = uniquePrefix(`${label}-dq`);
  const opened: Array<{ queue: RedisDeliveryQueue; connection: RedisClient }> = [];
  const open = () => {
    const connection = client().duplicate();
    connection.on('error', () => {});
    const queue = new RedisDeliveryQueue({ client: connection, prefix, leaseMs });
    opened.push({ queue, connection });
    return queue;
  };
  const cleanup = async () => {
    for (const { queue, connection } of opened) {
      await queue.close();
      connection.disconnect();
    }
    await deletePrefix(client(), prefix);
  };
  return { prefix, open, cleanup };
}

/** Registers the contract (every group) and the Redis-specific queue tests; `client()` is called inside tests. */
export function runRedisDeliveryQueueTests(client: () => RedisClient, label: string): void {
  runDeliveryQueueContract({ describe, it, expect }, ({ leaseMs }) => {
    const { open, cleanup } = queues(client, label, leaseMs);
    return { queue: open(), peer: open, cleanup };
  });

  describe('RedisDeliveryQueue', () => {
    const withQueues = (leaseMs: number, body: (fixture: ReturnType<typeof queues>) => Promise<void>) => async () => {
      const fixture = queues(client, label, leaseMs);
      try {
        await body(fixture);
      } finally {
        await fixture.cleanup();
      }
    };

    it(
      'a job whose consumer died holding it is taken over by an instance already waiting, once the lease ran out',
      withQueues(600, async ({ open }) => {
        const [dying, survivor] = [open(), open()];
        const job = contractJob(1);
        await dying.enqueue([job]);
        const leasedAt = Date.now();
        expect((await dying.lease('first', 1, 0)).map((item) => item.job)).toEqual([job]);
        const waiting = survivor.lease('first', 1, 10_000);
        // The process dies: its connection drops, nothing is acked, close() never runs.
        dying.client.disconnect();
        const [takenOver] = await waiting;
        expect(Date.now() - leasedAt >= 600 - 20).toBe(true);
        expect(takenOver!.job).toEqual(job);
        await survivor.ack(takenOver!);
        expect(await survivor.stats()).toEqual(EMPTY);
      }),
    );

    it(
      'jobs survive the instance that enqueued them, and close() leaves a held lease to be taken over',
      withQueues(400, async ({ open }) => {
        const first = open();
        const [one, two] = [contractJob(1), contractJob(2)];
        await first.enqueue([one, two]);
        expect((await first.lease('first', 1, 0)).map((item) => item.job)).toEqual([one]);
        await first.close();
        const second = open();
        const fresh = await second.lease('first', 2, 0);
        expect(fresh.map((item) => item.job)).toEqual([two]);
        await second.ack(fresh[0]!);
        expect((await second.lease('first', 2, 5_000)).map((item) => item.job)).toEqual([one]);
      }),
    );

    it(
      'waits on a connection of its own: the shared client answers while a lease is blocked',
      withQueues(30_000, async ({ open }) => {
        const queue = open();
        let leaseSettled = false;
        const waiting = queue.lease('retry', 1, 1_200).then((leased) => ((leaseSettled = true), leased));
        await new Promise((resolve) => setTimeout(resolve, 300));
        // With the wait on the shared client, this would queue behind the blocked read.
        expect(await queue.stats()).toEqual(EMPTY);
        expect(await queue.client.ping()).toBe('PONG');
        expect(leaseSettled).toBe(false);
        expect(await waiting).toEqual([]);
      }),
    );

    it(
      'keeps the queue in two streams with group `workers` and a ZSET, all under the prefix and one hash tag',
      withQueues(30_000, async ({ open, prefix }) => {
        const queue = open();
        const keys = deliveryQueueKeys(prefix);
        await queue.enqueue([contractJob(1), contractJob(2)]);
        const [one, two] = await queue.lease('first', 2, 0);
        await queue.retry(one!, { ...one!.job, attempt: 2 }, Date.now() + 60_000);
        await queue.retry(two!, { ...two!.job, attempt: 2 }, Date.now() - 1);
        await queue.lease('retry', 1, 2_000);
        const redis = queue.client;
        expect([await redis.type(keys.first), await redis.type(keys.retry), await redis.type(keys.scheduled)]).toEqual([
          'stream',
          'stream',
          'zset',
        ]);
        for (const key of Object.values(keys)) expect(key.startsWith(`${prefix}{parley:deliveries}:`)).toBe(true);
        const groups = (await redis.xinfo('GROUPS', keys.first)) as unknown[][];
        expect(groups.map((group) => group[1])).toEqual(['workers']);
        expect(await countPrefix(redis, prefix)).toBe(3);
      }),
    );

    it(
      'an ack or retry of a job whose stream is gone does nothing, and creates no key',
      withQueues(30_000, async ({ open, prefix }) => {
        const queue = open();
        const keys = deliveryQueueKeys(prefix);
        await queue.enqueue([contractJob(1), contractJob(2)]);
        const [one, two] = await queue.lease('first', 2, 0);
        await queue.client.del(keys.first);
        await queue.ack(one!);
        await queue.retry(two!, { ...two!.job, attempt: 2 }, Date.now() - 1);
        expect(await countPrefix(queue.client, prefix)).toBe(0);
        expect(await queue.stats()).toMatchObject({ scheduled: 0 });
      }),
    );

    it(
      'close() removes its consumer from the groups when it holds no lease, and keeps it when it does',
      withQueues(30_000, async ({ open, prefix }) => {
        const keys = deliveryQueueKeys(prefix);
        const [idle, holding, observer] = [open(), open(), open()];
        await observer.enqueue([contractJob(1), contractJob(2)]);
        const [done] = await idle.lease('first', 1, 0);
        await idle.ack(done!);
        expect((await holding.lease('first', 1, 0)).length).toBe(1);
        const consumers = async () =>
          ((await observer.client.xinfo('CONSUMERS', keys.first, 'workers')) as unknown[][])
            .map((fields) => fields[1])
            .sort();
        expect(await consumers()).toEqual([holding.consumer, idle.consumer].sort());
        await idle.close();
        await holding.close();
        expect(await consumers()).toEqual([holding.consumer]);
      }),
    );

    it(
      'refuses a receipt it did not issue, and options out of range before connecting',
      withQueues(30_000, async ({ open }) => {
        const queue: DeliveryQueue = open();
        await expect(queue.ack({ job: contractJob(1), receipt: 'first/not-an-id' })).rejects.toThrow(TypeError);
        await expect(
          queue.retry({ job: contractJob(1), receipt: 'other/1-0' }, contractJob(2), Date.now()),
        ).rejects.toThrow(TypeError);
        expect(() => new RedisDeliveryQueue({ client: client(), leaseMs: 0 })).toThrow(RangeError);
        expect(() => new RedisDeliveryQueue({ client: client(), promoteEveryMs: 501 })).toThrow(RangeError);
      }),
    );
  });
}
