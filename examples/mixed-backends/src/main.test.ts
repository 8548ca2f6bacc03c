/** @module Example (f): two instances with records in memory share exact rate limits on a real Redis. */
import { describeIfAvailable, deletePrefix, probeRedis, REDIS_URL, uniquePrefix } from '@parley/adapter-redis/testing';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { main, mixedInstance } from './main.js';

const describeRedis = describeIfAvailable({ describe, it }, `Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('mixed backends: records in memory, rate limits and idempotency on Redis', () => {
  const prefix = uniquePrefix('example-mixed');
  afterAll(async () => {
    const client = new Redis(REDIS_URL);
    await deletePrefix(client, prefix);
    await client.quit();
  });

  it('a plan of 3 is exact across two instances: the fourth request is refused on either', async () => {
    const lines: string[] = [];
    await main(REDIS_URL, (line) => lines.push(line), prefix);
    expect(lines).toEqual([
      'request 1 on instance 1: allowed, 2 left',
      'request 2 on instance 2: allowed, 1 left',
      'request 3 on instance 1: allowed, 0 left',
      'request 4 on instance 2: refused',
    ]);
  });

  it('records stay with their instance: an agent made on one is not found on the other', async () => {
    const [one, two] = [mixedInstance(REDIS_URL, prefix), mixedInstance(REDIS_URL, prefix)];
    try {
      const agent = await one.core.agents.create(
        { workspaceId: 'acme' },
        { name: 'A', description: '', model: 'modelA-4' },
      );
      expect((await one.core.agents.get({ workspaceId: 'acme' }, agent.id)).id).toBe(agent.id);
      await expect(two.core.agents.get({ workspaceId: 'acme' }, agent.id)).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
