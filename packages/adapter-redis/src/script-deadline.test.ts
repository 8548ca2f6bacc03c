/**
 * @module Deadline fencing: a write whose caller was told `service_unavailable` because Redis did
 * not answer in time (writes paused with `CLIENT PAUSE … WRITE`, as during a failover) is not
 * applied once Redis answers again — so a client that retries cannot create twice.
 */
import { ErrorCode, isParleyError } from '@parley/core';
import { Records } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStorage } from './redis-storage.js';
import { describeIfAvailable, freePort, probeRedisBinaries, startRedisServer, tempDir, type RedisProcess } from '../test/redis-available.js';

const WS = 'ws_deadline';
const PAUSE_MS = 1_500;
const TIMEOUT_MS = 300;

describeIfAvailable('A private redis-server', await probeRedisBinaries())('scripts fenced by their caller’s deadline', () => {
  let server: RedisProcess;
  let admin: Redis;
  let storage: RedisStorage;
  const directory = tempDir('deadline');

  beforeAll(async () => {
    server = await startRedisServer(await freePort(), directory.dir);
    admin = new Redis(server.url);
    storage = new RedisStorage({ url: server.url, timeoutMs: TIMEOUT_MS, prefix: 'deadline:' });
    await storage.ping();
  });
  afterAll(async () => {
    await storage.close();
    admin.disconnect();
    await server.kill();
    directory.remove();
  });

  it('a write that timed out during a write pause is never applied afterwards, while a plain command queued with it is', async () => {
    const records = new Records();
    // Before the pause: the workspace's outbox registration and the script's load are done, so
    // during the pause the one command sent is the fenced script itself.
    await records.insertAgent(storage, WS);
    const agent = records.agent();
    await admin.client('PAUSE', PAUSE_MS, 'WRITE');
    const unfenced = admin.hset('deadline:control', 'applied', 'yes'); // queued by the pause, then applied

    const error = await storage.agents.insert(WS, agent, records.event(WS, 'agent.created', agent)).then(() => null, (rejection: unknown) => rejection);
    expect(isParleyError(error, ErrorCode.serviceUnavailable), String(error)).toBe(true);

    await unfenced;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The control proves the pause queued writes and then ran them; ours refused to run late.
    expect(await admin.hget('deadline:control', 'applied')).toBe('yes');
    expect(await storage.agents.get(WS, agent.id)).toBeNull();
    expect((await storage.events.list(WS, { limit: 10, type: 'agent.created' }))?.events.map((event) => (event.data as { id: string }).id)).not.toContain(agent.id);

    // Nothing is wedged: the same write succeeds once Redis answers in time.
    await storage.agents.insert(WS, agent, records.event(WS, 'agent.created', agent));
    expect((await storage.agents.get(WS, agent.id))?.id).toBe(agent.id);
  });
});
