/**
 * @module `Idempotency-Key` on every POST under /api: replay, 422 for another request, 409 while in
 * flight, 20 concurrent requests run once, 5xx not kept — on memory, and across two app instances
 * sharing Redis or one PostgreSQL database.
 */
import { postgresAdapters } from '@parley/adapter-postgres';
import {
  createTestDatabase,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
} from '@parley/adapter-postgres/testing';
import { memoryAdapters } from '@parley/adapter-memory';
import { redisAdapters } from '@parley/adapter-redis';
import type { Adapters } from '@parley/core';
import { ErrorCode, ParleyError } from '@parley/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../../test-support/harness.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../../test-support/redis.js';

/**
 * A harness on memory whose agent inserts wait for `hold()`'s `open()`; `fail(n)` makes the next n
 * inserts fail with 503. The store is patched before the core is built, which wraps its methods.
 */
async function controlledInserts() {
  const adapters = memoryAdapters();
  const agents = adapters.storage.agents;
  const insert = agents.insert.bind(agents);
  let gate: Promise<void> = Promise.resolve();
  let failures = 0;
  agents.insert = async (workspaceId, agent, event) => {
    await gate;
    if (failures > 0) {
      failures -= 1;
      throw new ParleyError(ErrorCode.serviceUnavailable, 'Storage is unavailable.');
    }
    return insert(workspaceId, agent, event);
  };
  const h = await harness({}, adapters);
  return {
    h,
    hold(): () => void {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return open;
    },
    fail(count: number) {
      failures = count;
    },
  };
}

async function agentCount(h: Harness): Promise<number> {
  return (await json(await h.call('GET', '/api/agents'))).total;
}

describe('Idempotency-Key (memory)', () => {
  it('a repeat gets the identical response with Idempotent-Replayed: true, and changes nothing', async () => {
    const h = await harness();
    const first = await h.call('POST', '/api/agents', {
      json: agentInput,
      headers: { 'Idempotency-Key': 'create-ada-1' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    const firstBody = await first.text();
    for (let i = 0; i < 3; i += 1) {
      const again = await h.call('POST', '/api/agents', {
        json: agentInput,
        headers: { 'Idempotency-Key': 'create-ada-1' },
      });
      expect(again.status).toBe(201);
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
      expect(again.headers.get('Content-Type')).toMatch(/^application\/json/);
      expect(again.headers.get('RateLimit-Policy')).not.toBeNull();
      expect(await again.text()).toBe(firstBody);
    }
    expect(await agentCount(h)).toBe(1);
    // Keys are per workspace: the same key in another workspace is a request of its own.
    const other = await h.call('POST', '/api/agents', {
      key: h.otherKey,
      json: agentInput,
      headers: { 'Idempotency-Key': 'create-ada-1' },
    });
    expect(other.status).toBe(201);
    expect(other.headers.get('Idempotent-Replayed')).toBeNull();
  });

  it('the same key with another body or path is 422 idempotency_key_reused, and nothing runs', async () => {
    const h = await harness();
    const agent = await json(
      await h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': 'k-1' } }),
    );
    const otherBody = await h.call('POST', '/api/agents', {
      json: { ...agentInput, name: 'Bob' },
      headers: { 'Idempotency-Key': 'k-1' },
    });
    expect(otherBody.status).toBe(422);
    expect((await json(otherBody)).error).toEqual({ code: 'idempotency_key_reused', message: expect.any(String) });
    const otherPath = await h.call('POST', '/api/conversations', {
      json: { agentId: agent.id },
      headers: { 'Idempotency-Key': 'k-1' },
    });
    expect(otherPath.status).toBe(422);
    expect(await agentCount(h)).toBe(1);
    expect((await json(await h.call('GET', '/api/conversations'))).total).toBe(0);
  });

  it('a repeat while the first is still running is 409 idempotency_key_in_use; afterwards it replays', async () => {
    const inserts = await controlledInserts();
    const h = inserts.h;
    const open = inserts.hold();
    const first = h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': 'slow' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const during = await h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': 'slow' } });
    expect(during.status).toBe(409);
    expect((await json(during)).error.code).toBe('idempotency_key_in_use');
    open();
    expect((await first).status).toBe(201);
    const after = await h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': 'slow' } });
    expect(after.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await agentCount(h)).toBe(1);
  });

  it('20 concurrent requests with one key run the operation once', async () => {
    const inserts = await controlledInserts();
    const h = inserts.h;
    const open = inserts.hold();
    const responses = Array.from({ length: 20 }, () =>
      h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': 'burst' } }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    open();
    const settled = await Promise.all(responses);
    const created = settled.filter(
      (response) => response.status === 201 && response.headers.get('Idempotent-Replayed') === null,
    );
    expect(created).toHaveLength(1);
    expect(settled.filter((response) => response.status === 409)).toHaveLength(19);
    expect(await agentCount(h)).toBe(1);
  });

  it('a 5xx is not kept: the retry runs again and succeeds', async () => {
    const inserts = await controlledInserts();
    const h = inserts.h;
    inserts.fail(1);
    const failed = await h.call('POST', '/api/agents', {
      json: agentInput,
      headers: { 'Idempotency-Key': 'retry-me' },
    });
    expect(failed.status).toBe(503);
    const retried = await h.call('POST', '/api/agents', {
      json: agentInput,
      headers: { 'Idempotency-Key': 'retry-me' },
    });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await agentCount(h)).toBe(1);
  });

  it('a 4xx is kept: the same invalid request replays its 400 without running', async () => {
    const h = await harness();
    const invalid = { ...agentInput, model: 'no-such-model' };
    const first = await h.call('POST', '/api/agents', { json: invalid, headers: { 'Idempotency-Key': 'bad' } });
    expect(first.status).toBe(400);
    const again = await h.call('POST', '/api/agents', { json: invalid, headers: { 'Idempotency-Key': 'bad' } });
    expect(again.status).toBe(400);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
  });

  it('covers every POST under /api: conversations, messages and webhooks replay too', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    const posts: Array<[string, unknown]> = [
      ['/api/conversations', { agentId: agent.id }],
      [`/api/conversations/${conversation.id}/messages`, { role: 'user', content: 'Hi' }],
      ['/api/webhooks', { url: 'https://example.com/hook', events: ['message.sent'] }],
    ];
    for (const [path, body] of posts) {
      const first = await h.call('POST', path, { json: body, headers: { 'Idempotency-Key': `key-${path}` } });
      expect(first.status, path).toBe(201);
      const again = await h.call('POST', path, { json: body, headers: { 'Idempotency-Key': `key-${path}` } });
      expect(again.headers.get('Idempotent-Replayed'), path).toBe('true');
      expect(await again.text()).toBe(await first.text());
    }
    const history = await json(await h.call('GET', `/api/conversations/${conversation.id}/messages`));
    expect(history.messages).toHaveLength(1);
  });

  it('refuses a malformed key with 400 validation_failed; without the header nothing changes', async () => {
    const h = await harness();
    for (const bad of ['', 'a'.repeat(256), 'has space', 'naïve']) {
      const response = await h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': bad } });
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect((await json(response)).error).toMatchObject({
        code: 'validation_failed',
        details: { issues: [{ path: 'Idempotency-Key' }] },
      });
    }
    expect((await h.call('POST', '/api/agents', { json: agentInput })).status).toBe(201);
    expect((await h.call('POST', '/api/agents', { json: agentInput })).status).toBe(201);
    expect(await agentCount(h)).toBe(2);
  });

  it('an over-long key is refused naming its length and the limit', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', {
      json: agentInput,
      headers: { 'Idempotency-Key': 'k'.repeat(300) },
    });
    const { error } = await json(response);
    expect(error.details.issues).toEqual([
      { path: 'Idempotency-Key', message: 'Idempotency-Key is 300 characters long; the limit is 255.' },
    ]);
    expect(error.message).toContain('the limit is 255');
    const spaced = await json(
      await h.call('POST', '/api/agents', { json: agentInput, headers: { 'Idempotency-Key': 'has space' } }),
    );
    expect(spaced.error.details.issues[0].message).toBe(
      'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces or control characters).',
    );
  });
});

/** A store several app instances share: each `instance()` opens its own adapters (own client or pool) over it. */
interface SharedStore {
  name: string;
  describe: typeof describe | typeof describe.skip;
  open(): Promise<Adapters>;
  cleanup(): Promise<void>;
}

const redisPrefix = uniquePrefix('idempotency');
let database: TestDatabase | undefined;
const stores: SharedStore[] = [
  {
    name: 'Redis',
    describe: describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis()),
    open: async () => redisAdapters({ url: REDIS_URL, prefix: redisPrefix }),
    async cleanup() {
      const client = new Redis(REDIS_URL);
      await deletePrefix(client, redisPrefix);
      await client.quit();
    },
  },
  {
    name: 'PostgreSQL',
    describe: describeIfPostgres({ describe, it }, await probePostgres()),
    async open() {
      database ??= await createTestDatabase();
      // Each instance opens its pool's connections during the burst below; on a busy shared
      // PostgreSQL that can take over the default 1 s, and a 503 from the pool is not what this
      // file tests (concurrent-patches.test.ts runs the server's own pool settings under load).
      const adapters = postgresAdapters({ connectionString: database.url, connectionTimeoutMs: 10_000 });
      await adapters.ready();
      return adapters;
    },
    cleanup: async () => database?.drop(),
  },
];

for (const store of stores)
  store.describe(`Idempotency-Key across two instances sharing ${store.name}`, () => {
    const opened: Adapters[] = [];
    afterAll(async () => {
      await Promise.all(opened.map((adapters) => adapters.close()));
      await store.cleanup();
    });

    /** An app instance of its own (its own client or pool) over the shared store. */
    async function instance(): Promise<Harness> {
      const adapters = await store.open();
      opened.push(adapters);
      return harness({}, adapters);
    }

    it('a create through one instance replays through the other; 20 concurrent requests over both run once', async () => {
      const [a, b] = [await instance(), await instance()];
      const first = await a.call('POST', '/api/agents', {
        json: agentInput,
        headers: { 'Idempotency-Key': 'cross-1' },
      });
      expect(first.status).toBe(201);
      const replayed = await b.call('POST', '/api/agents', {
        json: agentInput,
        headers: { 'Idempotency-Key': 'cross-1' },
      });
      expect(replayed.headers.get('Idempotent-Replayed')).toBe('true');
      expect(await replayed.text()).toBe(await first.text());
      expect(
        (
          await b.call('POST', '/api/agents', {
            json: { ...agentInput, name: 'Eve' },
            headers: { 'Idempotency-Key': 'cross-1' },
          })
        ).status,
      ).toBe(422);

      const settled = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).call('POST', '/api/agents', {
            json: agentInput,
            headers: { 'Idempotency-Key': 'cross-burst' },
          }),
        ),
      );
      const ran = settled.filter(
        (response) => response.status === 201 && response.headers.get('Idempotent-Replayed') === null,
      );
      expect(ran).toHaveLength(1);
      expect(settled.map(({ status }) => status).filter((status) => status !== 201 && status !== 409)).toEqual([]);
      expect(await agentCount(a)).toBe(2);
    });
  });
