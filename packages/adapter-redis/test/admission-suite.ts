/**
 * @module Admissions on Redis: a storage call decides the request's rate limit in its own script,
 * on the state the rate-limit store's `hit` uses, and does nothing when refused.
 */
import { gcra, isParleyError, RateLimiter, type Principal, type RateLimitStore } from '@parley/core';
import { ManualClock, Records } from '@parley/core/testing';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisAdapters } from '../src/redis-adapters.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

const WS = 'ws_admission';
/** Two requests per hour: the third within the hour is refused. */
const principal: Principal = { keyId: 'key_admission', workspaceId: WS, plan: 'enterprise', scopes: ['*'], limitPerHour: 2 };

export function runAdmissionTests(client: () => Redis | Cluster): void {
  describe('admissions decided in storage scripts', () => {
    const prefixes: string[] = [];
    afterAll(async () => {
      for (const prefix of prefixes) await deletePrefix(client(), prefix);
    });
    function setUp() {
      const prefix = uniquePrefix('admission');
      prefixes.push(prefix);
      const adapters = redisAdapters({ client: client(), prefix });
      return { adapters, limiter: new RateLimiter(adapters.rateLimits, new ManualClock(1_800_000_000_000)), records: new Records() };
    }

    it('a write decides it first: admitted it is stored, refused it stores nothing and records no event', async () => {
      const { adapters, limiter, records } = setUp();
      const { storage } = adapters;
      const first = records.agent();
      const admitted = limiter.admission(principal);
      await storage.agents.insert(WS, first, records.event(WS, 'agent.created', first), admitted);
      expect(admitted.pending).toBe(false);
      expect(await admitted.result()).toMatchObject({ allowed: true, remaining: 1 });

      // The rate-limit store's own hit sees what the script recorded, and counts on the same state.
      expect(await limiter.check(principal)).toMatchObject({ allowed: true, remaining: 0 });

      const second = records.agent();
      const refused = limiter.admission(principal);
      const error = await storage.agents.insert(WS, second, records.event(WS, 'agent.created', second), refused).catch((caught: unknown) => caught);
      expect(isParleyError(error) && error.code).toBe('rate_limit_exceeded');
      expect(await refused.result()).toMatchObject({ allowed: false, remaining: 0 });
      expect(await storage.agents.get(WS, second.id)).toBeNull();
      const page = await storage.events.list(WS, { limit: 10 });
      expect(page!.events.map((event) => event.data)).toEqual([expect.objectContaining({ id: first.id })]);
    });

    it('appends made at once decide their hits in call order on one state: past the limit an append stores nothing', async () => {
      const { adapters, limiter, records } = setUp();
      const { storage } = adapters;
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const missing = records.message(records.id('conv'));
      const messages = [records.message(conversation.id), missing, records.message(conversation.id), records.message(conversation.id)];
      const admissions = messages.map(() => limiter.admission(principal));
      const outcomes = await Promise.allSettled(messages.map((message, index) => storage.messages.append(WS, message, records.sent(WS, message), undefined, admissions[index])));

      // Two per hour: the append to a missing conversation counts too (as a read would), so the last is refused.
      expect(outcomes.slice(0, 3)).toEqual([
        { status: 'fulfilled', value: 'appended' },
        { status: 'fulfilled', value: 'conversation_not_found' },
        { status: 'rejected', reason: expect.objectContaining({ code: 'rate_limit_exceeded' }) },
      ]);
      expect(outcomes[3]).toMatchObject({ status: 'rejected', reason: { code: 'rate_limit_exceeded' } });
      expect(await Promise.all(admissions.map(async (admission) => (await admission.result()).remaining))).toEqual([1, 0, 0, 0]);
      expect(await Promise.all(admissions.map(async (admission) => (await admission.result()).allowed))).toEqual([true, true, false, false]);
      expect((await storage.messages.page(WS, conversation.id, { limit: 10 }))!.messages).toEqual([messages[0]]);
      const page = await storage.events.list(WS, { limit: 10, type: 'message.sent' });
      expect(page!.events.map((event) => event.data)).toEqual([messages[0]]);
    });

    it('a single read decides it in one script (HGET), and the next call of the request finds it decided', async () => {
      const { adapters, limiter, records } = setUp();
      const { storage } = adapters;
      const agent = records.agent();
      await storage.agents.insert(WS, agent, records.event(WS, 'agent.created', agent));
      const admission = limiter.admission(principal);
      expect(await storage.agents.get(WS, agent.id, admission)).toMatchObject({ id: agent.id });
      expect(await admission.result()).toMatchObject({ allowed: true, remaining: 1 });
      expect(await storage.agents.list(WS, { offset: 0, limit: 10 }, admission)).toMatchObject({ total: 1 });
      expect(await limiter.check(principal)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it("leaves an admission alone when its state is elsewhere: another store's, or another key prefix", async () => {
      const { adapters, records } = setUp();
      const agent = records.agent();
      await adapters.storage.agents.insert(WS, agent, records.event(WS, 'agent.created', agent));
      const elsewhereStore: RateLimitStore = { hit: async (_key, rule, nowMs) => gcra(null, rule, nowMs).decision };
      const inMemory = new RateLimiter(elsewhereStore, new ManualClock(1_800_000_000_000)).admission(principal);
      expect(await adapters.storage.agents.get(WS, agent.id, inMemory)).toMatchObject({ id: agent.id });
      expect(inMemory.pending).toBe(true);

      const elsewhere = redisAdapters({ client: client(), prefix: uniquePrefix('admission-other') });
      const otherPrefix = new RateLimiter(elsewhere.rateLimits, new ManualClock(1_800_000_000_000)).admission(principal);
      await adapters.storage.agents.get(WS, agent.id, otherPrefix);
      expect(otherPrefix.pending).toBe(true);
    });
  });
}
