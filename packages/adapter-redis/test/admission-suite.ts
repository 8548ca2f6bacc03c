/**
 * @module Rate limits decided on Redis: a storage call given a scope with a pending decision decides the request's rate limit in its own script,
 * on the state the rate-limit store's `hit` uses, and does nothing when refused.
 */
import { Admission, createCore, isParleyError, RateLimiter, type Principal } from '@parley/core';
import { gcra, type RateLimitStore } from '@parley/core/adapter';
import { ManualClock, Records } from '@parley/core/testing';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisAdapters } from '../src/redis-adapters.js';
import { RedisRateLimitStore } from '../src/redis-rate-limits.js';
import { RedisStorage } from '../src/redis-storage.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

const WS = 'ws_admission';
/** Two requests per hour: the third within the hour is refused. */
const principal: Principal = {
  keyId: 'key_admission',
  workspaceId: WS,
  plan: 'enterprise',
  scopes: ['*'],
  limitPerHour: 2,
};

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
      return {
        adapters,
        limiter: new RateLimiter(adapters.rateLimits, new ManualClock(1_800_000_000_000)),
        records: new Records(),
      };
    }

    it('a write decides it first: admitted it is stored, refused it stores nothing and records no event', async () => {
      const { adapters, limiter, records } = setUp();
      const { storage } = adapters;
      const first = records.agent();
      const admitted = new Admission(limiter, principal);
      await storage.agents.insert({ workspaceId: WS, admission: admitted }, first, {
        event: records.event(WS, 'agent.created', first),
      });
      expect(admitted.pending).toBe(false);
      expect(await admitted.result()).toMatchObject({ allowed: true, remaining: 1 });

      // The rate-limit store's own hit sees what the script recorded, and counts on the same state.
      expect(await limiter.check(principal)).toMatchObject({ allowed: true, remaining: 0 });

      const second = records.agent();
      const refused = new Admission(limiter, principal);
      const error = await storage.agents
        .insert({ workspaceId: WS, admission: refused }, second, { event: records.event(WS, 'agent.created', second) })
        .catch((caught: unknown) => caught);
      expect(isParleyError(error) && error.code).toBe('rate_limit_exceeded');
      expect(await refused.result()).toMatchObject({ allowed: false, remaining: 0 });
      expect(await storage.agents.get({ workspaceId: WS }, second.id)).toBeNull();
      const page = await storage.events.list({ workspaceId: WS }, { limit: 10 });
      expect(page!.events.map((event) => event.data)).toEqual([expect.objectContaining({ id: first.id })]);
    });

    it('appends made at once decide their hits in call order on one state: past the limit an append stores nothing', async () => {
      const { adapters, limiter, records } = setUp();
      const { storage } = adapters;
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const missing = records.message(records.id('conv'));
      const messages = [
        records.message(conversation.id),
        missing,
        records.message(conversation.id),
        records.message(conversation.id),
      ];
      const admissions = messages.map(() => new Admission(limiter, principal));
      const outcomes = await Promise.allSettled(
        messages.map((message, index) =>
          storage.messages.append({ workspaceId: WS, admission: admissions[index] }, message, {
            event: records.sent(WS, message),
          }),
        ),
      );

      // Two per hour: the append to a missing conversation counts too (as a read would), so the last is refused.
      expect(outcomes.slice(0, 3)).toEqual([
        { status: 'fulfilled', value: 'appended' },
        { status: 'fulfilled', value: 'conversation_not_found' },
        { status: 'rejected', reason: expect.objectContaining({ code: 'rate_limit_exceeded' }) },
      ]);
      expect(outcomes[3]).toMatchObject({ status: 'rejected', reason: { code: 'rate_limit_exceeded' } });
      expect(await Promise.all(admissions.map(async (admission) => (await admission.result()).remaining))).toEqual([
        1, 0, 0, 0,
      ]);
      expect(await Promise.all(admissions.map(async (admission) => (await admission.result()).allowed))).toEqual([
        true,
        true,
        false,
        false,
      ]);
      expect((await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 }))!.messages).toEqual([
        messages[0],
      ]);
      const page = await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'message.sent' });
      expect(page!.events.map((event) => event.data)).toEqual([messages[0]]);
    });

    it('a single read decides it in one script (HGET), and the next call of the request finds it decided', async () => {
      const { adapters, limiter, records } = setUp();
      const { storage } = adapters;
      const agent = records.agent();
      await storage.agents.insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) });
      const scope = { workspaceId: WS, admission: new Admission(limiter, principal) };
      expect(await storage.agents.get(scope, agent.id)).toMatchObject({ id: agent.id });
      expect(await scope.admission.result()).toMatchObject({ allowed: true, remaining: 1 });
      expect(await storage.agents.list(scope, { offset: 0, limit: 10 })).toMatchObject({ total: 1 });
      expect(await limiter.check(principal)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('a core hands the decision to these scripts only over its own bundle: with another rate-limit store it decides it apart, first', async () => {
      const { adapters, records } = setUp();
      const agent = records.agent();
      await adapters.storage.agents.insert({ workspaceId: WS }, agent, {
        event: records.event(WS, 'agent.created', agent),
      });
      let hits = 0;
      const elsewhere: RateLimitStore = {
        hit: async (_key, rule, nowMs) => {
          hits += 1;
          return gcra(null, rule, nowMs).decision;
        },
      };
      const core = createCore({ ...adapters, rateLimits: elsewhere });
      expect(core.rateLimiter.folds).toBe(false);
      const scope = { workspaceId: WS, admission: new Admission(core.rateLimiter, principal) };
      expect(await core.agents.get(scope, agent.id)).toMatchObject({ id: agent.id });
      expect(scope.admission.decidedInStorage).toBe(false);
      expect(hits).toBe(1);
      expect(createCore(adapters).rateLimiter.folds).toBe(true);
    });

    it('a RedisStorage refuses a rate-limit store on another key prefix', () => {
      const elsewhere = redisAdapters({ client: client(), prefix: uniquePrefix('admission-other') });
      expect(
        () =>
          new RedisStorage({
            client: client(),
            prefix: uniquePrefix('admission'),
            rateLimits: elsewhere.rateLimits as RedisRateLimitStore,
          }),
      ).toThrow(TypeError);
    });
  });
}
