/**
 * @module RedisDeliveryQueue's commands, counted on a private redis-server (whose `INFO
 * commandstats` no other test shares): a worker leasing back to back runs XAUTOCLAIM once per
 * block slice, not once per lease, and still takes over a job whose lease ran out; acks asked for
 * together are one XACK.
 */
import { contractJob } from '@parley/core/testing';
import { afterAll, expect, it } from 'vitest';
import { describeIfAvailable, privateRedisServer, probeRedisBinaries } from '../../test/redis-available.js';
import { RedisDeliveryQueue } from './redis-delivery-queue.js';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

/** A lease of 800 ms: block slices, and so scans for expired leases, of 200 ms. */
const LEASE_MS = 800;

describeServer('RedisDeliveryQueue: commands run', () => {
  const redis = privateRedisServer('queue-commands');
  const queues: RedisDeliveryQueue[] = [];
  afterAll(async () => {
    for (const queue of queues) await queue.close();
  });

  const calls = (command: string) => redis.calls(command);
  const xautoclaims = () => calls('xautoclaim');

  it('runs once per slice for a worker that leases back to back, and still finds a lease that ran out', async () => {
    const queue = new RedisDeliveryQueue({ url: redis.url, prefix: 'reclaim:', leaseMs: LEASE_MS });
    const other = new RedisDeliveryQueue({ url: redis.url, prefix: 'reclaim:', leaseMs: LEASE_MS });
    queues.push(queue, other);
    const job = contractJob(1);
    await queue.enqueue([job]);
    const [abandoned] = await queue.lease('first', 1, 0);
    expect(abandoned!.job).toEqual(job);

    // 50 leases back to back: a scan at the first (which reaches the end of the pending list),
    // then one per slice begun — one in all, unless the machine is slow enough to take a slice.
    const before = await xautoclaims();
    const started = Date.now();
    for (let i = 0; i < 50; i += 1) expect(await other.lease('first', 1, 0)).toEqual([]);
    const slicesBegun = Math.floor((Date.now() - started) / (LEASE_MS / 4));
    expect((await xautoclaims()) - before).toBeLessThanOrEqual(1 + slicesBegun);

    // The abandoned job is taken over once its lease ran out, at most a slice later.
    const [takenOver] = await other.lease('first', 1, 5_000);
    expect(takenOver!.job).toEqual(job);
    await other.ack(takenOver!);
    expect(await other.stats()).toEqual({ first: 0, retry: 0, scheduled: 0, leased: 0 });
  });

  it('sends acks asked for together as one script, each settling its own job', async () => {
    const queue = new RedisDeliveryQueue({ url: redis.url, prefix: 'acks:', leaseMs: 30_000 });
    queues.push(queue);
    await queue.enqueue(Array.from({ length: 12 }, (_, i) => contractJob(i)));
    const leased = await queue.lease('first', 12, 0);
    expect(leased).toHaveLength(12);
    const before = await calls('xack');
    // One of them twice: acking an acked job does nothing.
    await Promise.all([...leased.slice(0, 10), leased[0]!].map((each) => queue.ack(each)));
    expect((await calls('xack')) - before).toBe(1);
    expect(await queue.stats()).toEqual({ first: 0, retry: 0, scheduled: 0, leased: 2 });
    await queue.ack(leased[10]!);
    await queue.ack(leased[11]!);
    expect((await calls('xack')) - before).toBe(3);
    expect(await queue.stats()).toEqual({ first: 0, retry: 0, scheduled: 0, leased: 0 });
  });
});
