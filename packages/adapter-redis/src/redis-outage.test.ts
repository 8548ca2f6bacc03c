/**
 * @module Faults: with a private redis-server killed, hung or never started, every call rejects
 * with `service_unavailable` within about a second, and the same adapters work again once the
 * server is back.
 */
import { ErrorCode, isParleyError } from '@parley/core';
import { Redis } from 'ioredis';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisRunner, resilientRedisOptions } from './connection.js';
import type { Adapters as RedisAdapters } from '@parley/core/adapter';
import { redisAdapters } from './redis-adapters.js';
import { RedisStorage } from './redis-storage.js';
import { describeIfAvailable } from '../test/redis-available.js';
import { freePort, probeRedisBinaries, startRedisServer, tempDir, type RedisProcess } from '../test/redis-available.js';
import { Records } from '@parley/core/testing';

/** The workspace these Redis-specific tests write to (under a unique key prefix). */
const WS = 'ws_redis_specific';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

/** Generous over the 1 000 ms deadline for a loaded CI machine, far below "hangs". */
const REJECT_WITHIN_MS = 1_500;
const RULE = { limit: 5, periodMs: 60_000 };

async function expectUnavailable(call: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  const error = await call().then(
    () => new Error('resolved'),
    (rejection: unknown) => rejection,
  );
  const elapsed = Date.now() - started;
  expect(isParleyError(error, ErrorCode.serviceUnavailable), String(error)).toBe(true);
  expect((error as Error).cause).toBeInstanceOf(Error);
  expect(elapsed).toBeLessThan(REJECT_WITHIN_MS);
}

async function eventually(call: () => Promise<unknown>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await call();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A full, synchronous garbage collection (the flag can be turned on at run time). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** A weak reference to what one call that expired held on to. */
async function expiredCallPayload(runner: RedisRunner): Promise<WeakRef<object>> {
  const payload = { content: 'x'.repeat(1_000) };
  await expectUnavailable(() => runner.run(async () => payload));
  return new WeakRef(payload);
}

describeServer('Redis outage and recovery', () => {
  const temp = tempDir('outage');
  let port: number;
  let server: RedisProcess | undefined;
  let adapters: RedisAdapters & { client: Redis };
  const records = new Records();

  beforeAll(async () => {
    port = await freePort();
    server = await startRedisServer(port, temp.dir);
    // The test watches the connection, so it passes a client of its own (the bundle leaves it open).
    const client = new Redis(server.url, resilientRedisOptions());
    client.on('error', () => {});
    adapters = { ...redisAdapters({ client, prefix: 'parley-outage:' }), client };
  });

  afterAll(async () => {
    await adapters?.close();
    adapters?.client.disconnect();
    server?.resume();
    await server?.kill();
    temp.remove();
  });

  it('rejects within a second while the server is down, then recovers without a new adapter', async () => {
    const { storage, apiKeys, rateLimits } = adapters;
    const agent = await records.insertAgent(storage, WS);
    expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);

    await server!.kill();
    // Right after the kill (the client may not have noticed yet) and once it is reconnecting.
    for (const moment of ['at once', 'while reconnecting']) {
      if (moment === 'while reconnecting')
        await eventually(async () => expect(adapters.client.status).not.toBe('ready'));
      await Promise.all([
        expectUnavailable(() => storage.ping()),
        expectUnavailable(() => storage.agents.get({ workspaceId: WS }, agent.id)),
        expectUnavailable(() => {
          const agent = records.agent();
          return storage.agents.insert({ workspaceId: WS }, agent, {
            event: records.event(WS, 'agent.created', agent),
          });
        }),
        expectUnavailable(() => storage.messages.page({ workspaceId: WS }, 'conv_x', { limit: 50 })),
        expectUnavailable(() => apiKeys.findByHash('0'.repeat(64))),
        expectUnavailable(() => rateLimits.hit('ws', RULE, Date.now())),
      ]);
    }

    server = await startRedisServer(port, temp.dir);
    await eventually(() => storage.ping());
    // The server restarted empty (no persistence): new writes and reads work on the same adapters.
    const fresh = await records.insertAgent(storage, WS);
    expect(await storage.agents.get({ workspaceId: WS }, fresh.id)).toEqual(fresh);
    expect((await rateLimits.hit('ws', RULE, Date.now())).allowed).toBe(true);
    expect(await apiKeys.findByHash('0'.repeat(64))).toBeNull();
  });

  it('rejects within a second while the server hangs (connection open, no answers), then recovers', async () => {
    const { storage } = adapters;
    await eventually(() => storage.ping());
    server!.pause();
    try {
      await expectUnavailable(() => storage.ping());
      await expectUnavailable(() => storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 }));
    } finally {
      server!.resume();
    }
    await eventually(() => storage.ping());
    expect((await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 })).total).toBeGreaterThan(0);
  });

  it('does not send a call later, once Redis is back, after its caller was told it failed', async () => {
    const { storage, client } = adapters;
    await eventually(() => storage.ping());
    await server!.kill();
    await eventually(async () => expect(client.status).not.toBe('ready'));
    const late = records.agent();
    await expectUnavailable(() =>
      storage.agents.insert({ workspaceId: WS }, late, { event: records.event(WS, 'agent.created', late) }),
    );
    server = await startRedisServer(port, temp.dir);
    await eventually(() => storage.ping());
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await storage.agents.get({ workspaceId: WS }, late.id)).toBeNull();
  });

  it('never hangs on a server that was never there, even with a client on default ioredis options', async () => {
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const owned = redisAdapters({ url: nowhere });
    // Default options: offline queue on, no command timeout, 20 retries — the deadline still holds.
    const client = new Redis(nowhere);
    client.on('error', () => {});
    const borrowed = new RedisStorage({ client });
    try {
      await Promise.all([
        expectUnavailable(() => owned.storage.ping()),
        expectUnavailable(() => owned.storage.agents.get({ workspaceId: WS }, 'agt_x')),
        expectUnavailable(() => borrowed.ping()),
        expectUnavailable(() => borrowed.conversations.get({ workspaceId: WS }, 'conv_x')),
      ]);
    } finally {
      await owned.close();
      client.disconnect();
    }
  });

  it('keeps nothing of a call whose deadline passed, so a long outage cannot grow memory', async () => {
    const client = new Redis(`redis://127.0.0.1:${await freePort()}`, resilientRedisOptions(50));
    client.on('error', () => {});
    try {
      const payload = await expiredCallPayload(new RedisRunner(client, 50, 'parley-outage:'));
      // A weak reference's target stays alive until the current job ends.
      await new Promise((resolve) => setTimeout(resolve, 0));
      collectGarbage();
      expect(payload.deref()).toBeUndefined();
    } finally {
      client.disconnect();
    }
  });
});
