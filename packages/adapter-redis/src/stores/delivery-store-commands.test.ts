/**
 * @module RedisDeliveryStore's commands, counted on a private redis-server (whose `INFO
 * commandstats` no other test shares): the attempts of one endpoint recorded in the same turn are
 * written by one script.
 */
import { Records } from '@parley/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeIfAvailable, privateRedisServer, probeRedisBinaries } from '../../test/redis-available.js';
import { RedisStorage } from '../redis-storage.js';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

describeServer('RedisDeliveryStore: commands run', () => {
  const redis = privateRedisServer('delivery-commands');
  let storage: RedisStorage;
  beforeAll(() => void (storage = new RedisStorage({ url: redis.url, prefix: 'commands:' })));
  afterAll(() => storage?.close());

  const calls = (command: string) => redis.calls(command);

  it('writes the attempts of one endpoint recorded in the same turn with one script', async () => {
    const records = new Records();
    const [one, two] = [await records.insertEndpoint(storage, 'ws'), await records.insertEndpoint(storage, 'ws')];
    const event = records.event('ws', 'agent.created', records.agent());
    const attempts = [
      ...Array.from({ length: 6 }, () => records.attempt(one.id, event)),
      records.attempt(two.id, event),
    ];
    const before = await calls('hexists');
    await Promise.all(attempts.map((attempt) => storage.deliveries.record({ workspaceId: 'ws' }, attempt)));
    // One script per endpoint, each checking its endpoint once.
    expect((await calls('hexists')) - before).toBe(2);
    expect((await storage.deliveries.list({ workspaceId: 'ws' }, one.id, { limit: 10 }))!.deliveries).toEqual(
      attempts.slice(0, 6).reverse(),
    );
    expect((await storage.deliveries.list({ workspaceId: 'ws' }, two.id, { limit: 10 }))!.deliveries).toEqual(
      attempts.slice(6),
    );
  });
});
