/**
 * @module The Redis adapters on a private 3-master Redis Cluster: the same contracts and
 * Redis-specific tests as on standalone Redis, through an ioredis `Cluster` client.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { resilientRedisOptions } from './connection.js';
import { redisAdapters, type RedisAdapters } from './redis-adapters.js';
import { runRedisContracts } from '../test/contract-suites.js';
import { runEventLogTests } from '../test/event-log-suite.js';
import { runRedisDeliveryQueueTests } from '../test/delivery-queue-suite.js';
import { runRedisReplyTests } from '../test/replies-suite.js';
import { describeIfAvailable } from '../test/redis-available.js';
import { probeRedisBinaries, startCluster, type RedisClusterProcesses } from '../test/redis-available.js';
import { runRedisSpecificTests } from '../test/redis-specific-suite.js';
import { runAdmissionTests } from '../test/admission-suite.js';

const describeCluster = describeIfAvailable(
  'A private Redis Cluster (redis-server, redis-cli)',
  await probeRedisBinaries(),
);

describeCluster('Redis adapters on Redis Cluster', () => {
  let cluster: RedisClusterProcesses | undefined;
  let adapters: RedisAdapters | undefined;
  let clusterClient: Cluster | undefined;

  beforeAll(async () => {
    cluster = await startCluster();
    // The tests read slots through the client, so they pass one of their own (the bundle leaves it open).
    clusterClient = new Cluster(cluster.nodes, { enableOfflineQueue: false, redisOptions: resilientRedisOptions() });
    clusterClient.on('error', () => {});
    adapters = redisAdapters({ client: clusterClient, prefix: 'parley-cluster:' });
    await adapters.storage.ping();
  }, 60_000);

  // Registered before the suites' hooks, so it runs last: processes and temp dirs always go.
  afterAll(async () => {
    await adapters?.close();
    clusterClient?.disconnect();
    await cluster?.stop();
  }, 30_000);

  const client = () => clusterClient!;

  // The cluster is private and torn down afterwards, so this test does not clean up its keys.
  it('spreads workspaces over several slots, each workspace whole on one (a host script over two of its keys too)', async () => {
    const { redis } = adapters!;
    const workspaces = ['ws_a', 'ws_b', 'ws_c', 'ws_d', 'ws_e', 'ws_f'];
    const slots = new Set<number>();
    const both = `redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[1]); return 1`;
    for (const workspace of workspaces) {
      const tag = redis.workspaceTag(workspace);
      expect(tag).toBe(`parley-cluster:{${workspace}}:`);
      expect(await redis.eval(both, [`${tag}host:a`, `${tag}host:b`], [workspace])).toBe(1);
      slots.add(Number(await client().cluster('KEYSLOT', `${tag}host:a`)));
    }
    expect(slots.size).toBeGreaterThan(1);
    for (const workspace of workspaces) {
      const tag = redis.workspaceTag(workspace);
      expect(
        await redis.eval(`return redis.call('MGET', KEYS[1], KEYS[2])`, [`${tag}host:a`, `${tag}host:b`], []),
      ).toEqual([workspace, workspace]);
    }
  });

  it('ready() checks every master: warns once that a Cluster without persistence loses every record', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (_fields: object, message: string) => void warnings.push(message) };
    const checked = redisAdapters({ client: client(), prefix: 'parley-cluster-checks:', logger });
    await checked.ready();
    await checked.close();
    expect(warnings).toEqual([expect.stringMatching(/neither AOF nor RDB persistence/)]);
  });

  runRedisContracts(client, 'cluster');
  runRedisSpecificTests(client);
  runAdmissionTests(client);
  runEventLogTests(client);
  runRedisDeliveryQueueTests(client, 'cluster');
  runRedisReplyTests(client, 'cluster');
});
