/**
 * @module RedisDeliveryStore's commands, counted on a private redis-server (whose `INFO
 * commandstats` no other test shares): the attempts of one endpoint recorded in the same turn are
 * written by one script.
 */
import { Records } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { commandCalls, describeIfAvailable, freePort, probeRedisBinaries, startRedisServer, tempDir, type RedisProcess } from '../../test/redis-available.js';
import { RedisStorage } from '../redis-storage.js';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

describeServer('RedisDeliveryStore: commands run', () => {
  const temp = tempDir('delivery-commands');
  let server: RedisProcess | undefined;
  let admin: Redis;
  let storage: RedisStorage;

  beforeAll(async () => {
    server = await startRedisServer(await freePort(), temp.dir);
    admin = new Redis(server.url);
    storage = new RedisStorage({ url: server.url, prefix: 'commands:' });
  });

  afterAll(async () => {
    await storage?.close();
    admin?.disconnect();
    await server?.kill();
    temp.remove();
  });

  const calls = (command: string) => commandCalls(admin, command);

  it('writes the attempts of one endpoint recorded in the same turn with one script', async () => {
    const records = new Records();
    const [one, two] = [await records.insertEndpoint(storage, 'ws'), await records.insertEndpoint(storage, 'ws')];
    const event = records.event('ws', 'agent.created', records.agent());
    const attempts = [...Array.from({ length: 6 }, () => records.attempt(one.id, event)), records.attempt(two.id, event)];
    const before = await calls('hexists');
    await Promise.all(attempts.map((attempt) => storage.deliveries.record('ws', attempt)));
    // One script per endpoint, each checking its endpoint once.
    expect((await calls('hexists')) - before).toBe(2);
    expect((await storage.deliveries.list('ws', one.id, { limit: 10 }))!.deliveries).toEqual(attempts.slice(0, 6).reverse());
    expect((await storage.deliveries.list('ws', two.id, { limit: 10 }))!.deliveries).toEqual(attempts.slice(6));
  });
});
