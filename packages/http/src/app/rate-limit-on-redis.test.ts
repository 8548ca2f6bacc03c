/**
 * @module The rate limit on Redis, decided in the storage call of the route
 * (docs/rate-limits.md#one-round-trip): one round trip per request, the same answers as the
 * up-front check — 429 with its header fields and nothing stored, and the error precedence of
 * docs/errors.md — on the same quota.
 */
import { MemoryDeliveryQueue } from '@parley/adapter-memory';
import type { CoreSettings, HostResolver } from '@parley/core';
import { redisAdapters } from '@parley/adapter-redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { harness, json } from '../test-support/harness.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('rate limits decided in the route’s Redis script', () => {
  let admin: Redis;
  let client: Redis;
  const prefix = uniquePrefix('rl-fold');

  beforeAll(async () => {
    admin = new Redis(REDIS_URL);
    client = new Redis(REDIS_URL);
    await client.ping();
  });
  afterAll(async () => {
    await deletePrefix(admin, prefix);
    admin.disconnect();
    client.disconnect();
  });

  /** A harness on Redis whose key `limited` allows `limit` requests per hour. */
  async function limitedHarness(limit: number, settings: CoreSettings = {}) {
    const h = await harness(
      {},
      {
        ...redisAdapters({ client, prefix: `${prefix}${uniquePrefix('h')}` }),
        deliveryQueue: new MemoryDeliveryQueue(),
      },
      settings,
    );
    const { key: limited } = await h.core.apiKeys.issue({
      workspaceId: `ws-${limit}-${Math.random()}`,
      plan: 'enterprise',
      limitPerHour: limit,
    });
    return { ...h, limited };
  }

  /**
   * The commands this test's client sent while `act` ran, read where ioredis hands each command to
   * its connection (`sendCommand`), so other test files sharing this Redis cannot show up in them.
   */
  async function commandsSentDuring(act: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const send = client.sendCommand;
    client.sendCommand = function (this: Redis, command, stream) {
      seen.push(command.name.toLowerCase());
      return send.call(this, command, stream);
    } as Redis['sendCommand'];
    try {
      await act();
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      client.sendCommand = send;
    }
    return seen;
  }

  it('a read route, and a write with its live-stream signal, each send one script: the rate limit rides in it', async () => {
    const { call, limited } = await limitedHarness(100);
    const agent = await json(
      await call('POST', '/api/agents', { key: limited, json: { name: 'A', description: 'd', model: 'modelA-4' } }),
    );
    const conversation = await json(
      await call('POST', '/api/conversations', { key: limited, json: { agentId: agent.id } }),
    );
    // Warm: the key's principal is cached, the scripts are loaded on this connection (EVAL once).
    await call('GET', `/api/agents/${agent.id}`, { key: limited });
    await call('POST', `/api/conversations/${conversation.id}/messages`, {
      key: limited,
      json: { role: 'user', content: 'hi' },
    });

    let response: Response | undefined;
    expect(
      await commandsSentDuring(async () => (response = await call('GET', `/api/agents/${agent.id}`, { key: limited }))),
    ).toEqual(['evalsha']);
    expect(response!.status).toBe(200);
    expect(response!.headers.get('RateLimit')).toMatch(/^"enterprise";r=9\d;t=\d+$/);
    expect(response!.headers.get('RateLimit-Policy')).toBe('"enterprise";q=100;w=3600');

    const sent = await commandsSentDuring(
      async () =>
        (response = await call('POST', `/api/conversations/${conversation.id}/messages`, {
          key: limited,
          json: { role: 'user', content: 'hi' },
        })),
    );
    expect(response!.status).toBe(201);
    expect(sent).toEqual(['evalsha', 'publish']);

    await call('GET', '/api/webhooks', { key: limited });
    expect(
      await commandsSentDuring(async () => (response = await call('GET', '/api/webhooks', { key: limited }))),
    ).toEqual(['evalsha']);
    expect(response!.status).toBe(200);
  });

  it('over the limit: 429 with its header fields, nothing stored, and the same quota as the up-front check', async () => {
    const { call, core, limited } = await limitedHarness(3);
    const agent = await json(
      await call('POST', '/api/agents', { key: limited, json: { name: 'A', description: 'd', model: 'modelA-4' } }),
    );
    const conversation = await json(
      await call('POST', '/api/conversations', { key: limited, json: { agentId: agent.id } }),
    );
    const post = () =>
      call('POST', `/api/conversations/${conversation.id}/messages`, {
        key: limited,
        json: { role: 'user', content: 'hi' },
      });
    expect((await post()).status).toBe(201);

    const refused = await post();
    expect(refused.status).toBe(429);
    expect((await json(refused)).error.code).toBe('rate_limit_exceeded');
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(refused.headers.get('RateLimit')).toMatch(/^"enterprise";r=0;t=\d+$/);
    const stored = await core.conversations.history(
      { workspaceId: (await core.apiKeys.authenticate(limited))!.workspaceId },
      conversation.id,
    );
    expect(stored.messages).toHaveLength(1);

    // A route that decides up front (usage) shares the quota, and so does a request that
    // fails before reaching storage: 429 comes before 400 (docs/errors.md#precedence).
    expect((await call('GET', '/api/usage', { key: limited })).status).toBe(429);
    expect((await call('GET', '/api/webhooks', { key: limited })).status).toBe(429);
    const invalid = await call('POST', `/api/conversations/${conversation.id}/messages`, {
      key: limited,
      json: { role: 'nobody' },
    });
    expect(invalid.status).toBe(429);
    expect(invalid.headers.get('RateLimit')).toMatch(/r=0/);
  });

  it('over the limit, nothing is resolved or stored: an agent with a webhook tool and a webhook endpoint look up no host name', async () => {
    const lookedUp: string[] = [];
    const hostResolver: HostResolver = { resolve: async (host) => (lookedUp.push(host), ['93.184.215.14']) };
    const { call, core, limited } = await limitedHarness(1, { hostResolver });
    const workspace = { workspaceId: (await core.apiKeys.authenticate(limited))!.workspaceId };
    expect((await call('GET', '/api/agents', { key: limited })).status).toBe(200);

    const tool = {
      name: 'lookup',
      description: 'd',
      parameters: { type: 'object' },
      kind: 'webhook',
      url: 'https://tools.example.com/run',
    };
    const agent = await call('POST', '/api/agents', {
      key: limited,
      json: { name: 'A', description: 'd', model: 'modelA-4', tools: [tool] },
    });
    expect(agent.status).toBe(429);
    const endpoint = await call('POST', '/api/webhooks', {
      key: limited,
      json: { url: 'https://hooks.example.com/in', events: ['*'] },
    });
    expect(endpoint.status).toBe(429);
    expect(lookedUp).toEqual([]);
    expect((await core.agents.list(workspace)).total).toBe(0);
    expect((await core.webhooks.list(workspace)).total).toBe(0);
  });

  it('a webhook endpoint whose URL needs no lookup is created in one script, the rate limit in it', async () => {
    const { call, limited } = await limitedHarness(100);
    await call('POST', '/api/webhooks', { key: limited, json: { url: 'https://93.184.215.14/warm', events: ['*'] } });
    let response: Response | undefined;
    const sent = await commandsSentDuring(
      async () =>
        (response = await call('POST', '/api/webhooks', {
          key: limited,
          json: { url: 'https://93.184.215.14/in', events: ['*'] },
        })),
    );
    expect(response!.status).toBe(201);
    expect(sent).toEqual(['evalsha']);
  });

  it('a request that fails before its storage call is counted once, after the fact', async () => {
    const { call, limited } = await limitedHarness(2);
    const invalid = await call('POST', '/api/agents', { key: limited, json: { name: '' } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('RateLimit')).toBe('"enterprise";r=1;t=1800');
    expect((await call('GET', '/api/agents', { key: limited })).headers.get('RateLimit')).toBe(
      '"enterprise";r=0;t=3600',
    );
    expect((await call('GET', '/api/agents', { key: limited })).status).toBe(429);
  });
});
