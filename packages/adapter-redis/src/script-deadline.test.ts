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
import {
  describeIfAvailable,
  freePort,
  probeRedisBinaries,
  startRedisServer,
  tempDir,
  type RedisProcess,
} from '../test/redis-available.js';

const WS = 'ws_deadline';
const PAUSE_MS = 1_500;
const TIMEOUT_MS = 300;

describeIfAvailable('A private redis-server', await probeRedisBinaries())(
  'scripts fenced by their caller’s deadline',
  () => {
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

      const error = await storage.agents
        .insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) })
        .then(
          () => null,
          (rejection: unknown) => rejection,
        );
      expect(isParleyError(error, ErrorCode.serviceUnavailable), String(error)).toBe(true);

      await unfenced;
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The control proves the pause queued writes and then ran them; ours refused to run late.
      expect(await admin.hget('deadline:control', 'applied')).toBe('yes');
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toBeNull();
      expect(
        (await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'agent.created' }))?.events.map(
          (event) => (event.data as { id: string }).id,
        ),
      ).not.toContain(agent.id);

      // Nothing is wedged: the same write succeeds once Redis answers in time.
      await storage.agents.insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) });
      expect((await storage.agents.get({ workspaceId: WS }, agent.id))?.id).toBe(agent.id);
    });

    it('a stall of this process while the clock is first measured does not fence the writes after it', async () => {
      const fresh = new RedisStorage({ url: server.url, timeoutMs: 1_000, prefix: 'stall:' });
      try {
        const records = new Records();
        // The first write measures the server's clock with TIME; this process is then busy for
        // 2.5 s before it reads the answer (a slow start, a long GC pause).
        const time = fresh.client.time.bind(fresh.client);
        let stalls = 1;
        fresh.client.time = (async () => {
          const answer = await time();
          for (const until = Date.now() + 2_500; stalls > 0 && Date.now() < until;);
          stalls = 0;
          return answer;
        }) as typeof fresh.client.time;
        const agent = await records.insertAgent(fresh, WS);
        expect((await fresh.agents.get({ workspaceId: WS }, agent.id))?.id).toBe(agent.id);
        // Later writes are fenced by a clock measured without the stall.
        const second = await records.insertAgent(fresh, WS);
        expect((await fresh.agents.get({ workspaceId: WS }, second.id))?.id).toBe(second.id);
      } finally {
        await fresh.close();
      }
    });

    it('a stall of this process longer than the deadline does not fail a call Redis answers after it', async () => {
      const fresh = new RedisStorage({ url: server.url, timeoutMs: 1_000, prefix: 'stall:' });
      try {
        await fresh.ping();
        // Redis holds every answer for 1.5 s; this process is busy from 50 ms to 1.4 s, past the
        // 1 s deadline, and finds no answer yet when it is free again.
        await admin.client('PAUSE', 1_500, 'ALL');
        const startedAt = Date.now();
        const answered = fresh.ping().then(
          () => Date.now() - startedAt,
          (error: unknown) => error,
        );
        await new Promise<void>((resolve) =>
          setTimeout(() => {
            for (const until = startedAt + 1_400; Date.now() < until;);
            resolve();
          }, 50),
        );
        expect(await answered).toBeGreaterThanOrEqual(1_400);
      } finally {
        await fresh.close();
      }
    });
  },
);
