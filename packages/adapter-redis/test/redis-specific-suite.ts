/**
 * @module Test support: behaviour the contracts cannot see — the key layout and hash tags,
 * multi-batch cascades, interrupted cascades, owner changes, awkward ids, rate-limit TTLs, API
 * key upserts — run over any client.
 */
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connection.js';
import { rateLimitKey, workspaceKeys } from '../src/keys.js';
import { RedisRateLimitStore } from '../src/redis-rate-limits.js';
import { RedisStorage } from '../src/redis-storage.js';
import { namedScript, runScript } from '../src/script.js';
import { AGENT_DELETE } from '../src/stores/agent-store.lua.js';
import { CASCADE_BATCH } from '../src/stores/cascade.js';
import { LUA_RECORD } from '../src/stores/records.lua.js';
import { runApiKeyUpsertTests } from './api-key-upsert-suite.js';
import { gcra, recordVersion } from '@parley/core/adapter';
import { Records } from '@parley/core/testing';
import { deletePrefix, keysUnder, uniquePrefix } from './redis-available.js';

/** The workspace these Redis-specific tests write to (under a unique key prefix). */
const WS = 'ws_redis_specific';

/**
 * The keys under `prefix` that hold records (conversations, messages, agents, their indexes),
 * leaving out the event log and outbox, which every write adds to.
 */
async function recordKeys(client: RedisClient, prefix: string): Promise<string[]> {
  return (await keysUnder(client, prefix)).filter(
    (key) => key.startsWith(`${prefix}{${WS}}:`) && !/\}:(event|events|outbox)(:|$)/.test(key),
  );
}

/** Runs `body` with a storage under a fresh prefix, deleting the prefix afterwards. */
function withStorage(client: () => RedisClient, body: (storage: RedisStorage, prefix: string) => Promise<void>) {
  return async () => {
    const prefix = uniquePrefix('specific');
    try {
      const storage = new RedisStorage({ client: client(), prefix });
      try {
        await body(storage, prefix);
      } finally {
        await storage.close();
      }
    } finally {
      await deletePrefix(client(), prefix);
    }
  };
}

/** Registers the Redis-specific tests. */
export function runRedisSpecificTests(client: () => RedisClient): void {
  describe('Redis-specific behaviour', () => {
    it(
      'keeps every key of a workspace under its hash tag',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u:{1}' });
        await records.appendMessages(storage, WS, conversation.id, 2);
        await storage.webhookEndpoints.insert({ workspaceId: WS }, records.endpoint());
        const keys: string[] = [];
        const current = client();
        for (const node of current instanceof Cluster ? current.nodes('master') : [current])
          keys.push(...(await node.keys(`${prefix}*`)));
        expect(keys.length).toBeGreaterThan(10);
        // Besides the outbox's two global keys (the registry and the hints), all under the workspace's tag.
        const global = [`${prefix}{parley:outbox}:workspaces`, `${prefix}{parley:outbox}:dirty`];
        for (const key of keys) expect(key.startsWith(`${prefix}{${WS}}:`) || global.includes(key)).toBe(true);
        // The user id's braces and colon are encoded, so they cannot move the tag or fake a suffix.
        expect(keys).toContain(workspaceKeys(prefix, WS).convsByUser('u:{1}'));
        expect(keys.some((key) => key.includes('u:{1}'))).toBe(false);
      }),
    );

    it(
      `deletes an agent with more than ${CASCADE_BATCH} conversations, leaving no key behind`,
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const kept = await records.insertAgent(storage, WS);
        const keptConversation = await records.insertConversation(storage, WS, kept.id, { userId: 'u1' });
        await records.appendMessages(storage, WS, keptConversation.id, 3);
        const before = (await recordKeys(client(), prefix)).sort();
        const doomed = await records.insertAgent(storage, WS);
        const count = CASCADE_BATCH * 2 + 7;
        for (let i = 0; i < count; i += 1) {
          const conversation = await records.insertConversation(storage, WS, doomed.id, {
            userId: i % 3 === 0 ? null : `user-${i % 5}`,
          });
          if (i % 10 === 0) await records.appendMessages(storage, WS, conversation.id, 2);
        }
        expect(
          (await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 1, agentId: doomed.id })).total,
        ).toBe(count);
        expect(
          await storage.agents.delete({ workspaceId: WS }, doomed.id, { event: records.draft(WS, 'agent.deleted') }),
        ).toEqual({ outcome: 'applied', record: doomed });
        expect((await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).total).toBe(1);
        expect(
          (await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, userId: 'user-1' })).total,
        ).toBe(0);
        // Exactly the keys that existed before the doomed agent: no index, hash or history left.
        expect((await recordKeys(client(), prefix)).sort()).toEqual(before);
      }),
    );

    it(
      'finishes a cascade an interrupted delete left pending at the next agent delete',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const doomed = await records.insertAgent(storage, WS);
        const orphan = await records.insertConversation(storage, WS, doomed.id);
        await records.appendMessages(storage, WS, orphan.id, 2);
        // Step 1 only, as if the process died right after it.
        const keys = workspaceKeys(prefix, WS);
        await runScript(
          client(),
          AGENT_DELETE.script,
          {
            keys: {
              agent: keys.agent,
              indexes: [keys.agents, keys.agentsByStatus('active'), keys.agentsByStatus('inactive')],
              cascades: keys.cascades,
              event: keys.event,
              events: keys.events,
              eventSeq: keys.eventSeq,
              outbox: keys.outbox,
              eventsOfType: keys.events,
            },
            args: {
              id: doomed.id,
              hasIfVersion: '0',
              ifVersion: [],
              where: [],
              eventId: '',
              eventHead: '',
              eventData: '',
              eventTrace: '',
            },
          },
          Date.now() + 60_000,
        );
        expect(await storage.agents.get({ workspaceId: WS }, doomed.id)).toBeNull();
        expect(await storage.conversations.get({ workspaceId: WS }, orphan.id)).not.toBeNull();
        const other = await records.insertAgent(storage, WS);
        await storage.agents.delete({ workspaceId: WS }, other.id, { event: records.draft(WS, 'agent.deleted') });
        expect(await storage.conversations.get({ workspaceId: WS }, orphan.id)).toBeNull();
        expect(await storage.messages.page({ workspaceId: WS }, orphan.id, { limit: 10 })).toEqual({
          messages: [],
          hasMore: false,
        });
        expect(await recordKeys(client(), prefix)).toEqual([]);
      }),
    );

    it(
      'never leaves a conversation behind when inserts race an agent delete',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const racing = Array.from({ length: 60 }, () => records.conversation(agent.id));
        const insert = (conversation: (typeof racing)[number]) =>
          storage.conversations.insert({ workspaceId: WS }, conversation, {
            event: records.event(WS, 'conversation.started', conversation),
          });
        const results = await Promise.all([
          ...racing.slice(0, 30).map(insert),
          storage.agents.delete({ workspaceId: WS }, agent.id, { event: records.draft(WS, 'agent.deleted') }),
          ...racing.slice(30).map(insert),
        ]);
        expect(results.filter((result) => result === 'inserted').length).toBeGreaterThan(0);
        for (const conversation of racing)
          expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toBeNull();
        expect(await recordKeys(client(), prefix)).toEqual([]);
      }),
    );

    it(
      "moves a conversation between its user's and agent's status indexes when an update changes its status",
      withStorage(client, async (storage) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'alice' });
        const moved = { ...conversation, status: 'completed' as const };
        expect(
          await storage.conversations.update({ workspaceId: WS }, conversation.id, { set: { status: 'completed' } }),
        ).toEqual({ outcome: 'applied', record: moved });
        const list = (filter: object) =>
          storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, ...filter });
        expect(await list({ userId: 'alice', status: 'active' })).toEqual({ items: [], total: 0 });
        expect(await list({ agentId: agent.id, status: 'active' })).toEqual({ items: [], total: 0 });
        expect(await list({ userId: 'alice', status: 'completed' })).toEqual({ items: [moved], total: 1 });
        expect(await list({ agentId: agent.id, status: 'completed' })).toEqual({ items: [moved], total: 1 });
        expect(await list({ agentId: agent.id, userId: 'alice' })).toEqual({ items: [moved], total: 1 });
      }),
    );

    it(
      'keeps user ids that look like key suffixes apart',
      withStorage(client, async (storage) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const plain = await records.insertConversation(storage, WS, agent.id, { userId: 'a' });
        const tricky = await records.insertConversation(storage, WS, agent.id, { userId: 'a:status:active' });
        expect(
          await storage.conversations.list(
            { workspaceId: WS },
            { offset: 0, limit: 10, userId: 'a', status: 'active' },
          ),
        ).toEqual({ items: [plain], total: 1 });
        expect(
          await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, userId: 'a:status:active' }),
        ).toEqual({ items: [tricky], total: 1 });
      }),
    );

    it(
      'keeps user ids with lone UTF-16 surrogates apart (a JSON body can carry them)',
      withStorage(client, async (storage) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const users = ['\ud800', '\udc00', '\ufffd', '%uD800'];
        const conversations = [];
        for (const userId of users)
          conversations.push(await records.insertConversation(storage, WS, agent.id, { userId }));
        for (const [i, userId] of users.entries()) {
          expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, userId })).toEqual({
            items: [conversations[i]],
            total: 1,
          });
        }
      }),
    );

    it(
      'keeps a message append and a completion in one record: the completion carries lastMessageAt, both bump the version',
      withStorage(client, async (storage) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const conversation = await records.insertConversation(storage, WS, agent.id);
        const [message] = await records.appendMessages(storage, WS, conversation.id, 1);
        const result = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
          set: { status: 'completed' },
          where: [{ field: 'status', equals: 'active' }],
          event: records.draft(WS, 'conversation.completed'),
        });
        expect(result?.record).toEqual({
          ...conversation,
          status: 'completed',
          lastMessageAt: message!.createdAt,
          updatedAt: message!.createdAt,
        });
        expect(recordVersion(result!.record)).toBe(3);
        const [event] = (await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'conversation.completed' }))!
          .events;
        expect(event!.data).toEqual(result!.record);
      }),
    );

    it(
      'updates and cascade-deletes conversations holding lone UTF-16 surrogates (Lua cjson rejects them)',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS, { name: 'a\ud800' });
        const conversation = await records.insertConversation(storage, WS, agent.id, {
          userId: 'u\ud800',
          metadata: { note: 'x\udc00' },
        });
        const messages = await records.appendMessages(storage, WS, conversation.id, 2);
        const lastMessageAt = messages.at(-1)!.createdAt;
        const completed = {
          ...conversation,
          status: 'completed' as const,
          lastMessageAt,
          updatedAt: lastMessageAt,
          metadata: { note: 'y\ud800', list: [], empty: {} },
        };
        const draft = records.draft(WS, 'conversation.completed');
        const change = {
          set: { status: 'completed' as const, metadata: completed.metadata },
          where: [{ field: 'userId' as const, equals: 'u\ud800' }],
          event: draft,
        };
        expect(await storage.conversations.update({ workspaceId: WS }, conversation.id, change)).toEqual({
          outcome: 'applied',
          record: completed,
        });
        expect(await storage.events.get({ workspaceId: WS }, draft.id)).toEqual({ ...draft, data: completed });
        expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(completed);
        expect(
          (
            await storage.conversations.list(
              { workspaceId: WS },
              { offset: 0, limit: 10, userId: 'u\ud800', status: 'completed' },
            )
          ).total,
        ).toBe(1);
        expect(
          await storage.agents.delete({ workspaceId: WS }, agent.id, { event: records.draft(WS, 'agent.deleted') }),
        ).toEqual({ outcome: 'applied', record: agent });
        // No cascade is left pending to fail every later agent delete of the workspace.
        const other = await records.insertAgent(storage, WS);
        expect(
          await storage.agents.delete({ workspaceId: WS }, other.id, { event: records.draft(WS, 'agent.deleted') }),
        ).toEqual({ outcome: 'applied', record: other });
        expect(await recordKeys(client(), prefix)).toEqual([]);
      }),
    );

    it('expires a rate-limit key when its quota is full again, even past periodMs', async () => {
      const prefix = uniquePrefix('rl-ttl');
      const store = new RedisRateLimitStore({ client: client(), prefix });
      // T = ceil(3 601 / 2) = 1 801 ms, so two hits put the TAT 3 602 ms ahead: 1 ms past the period.
      const rule = { limit: 2, periodMs: 3_601 };
      const now = Date.now();
      try {
        await store.hit('ws', rule, now);
        const second = await store.hit('ws', rule, now);
        expect(second.resetMs).toBe(3_602);
        const ttl = await client().pttl(rateLimitKey(prefix, 'ws'));
        expect(ttl).toBeLessThanOrEqual(second.resetMs);
        expect(ttl).toBeGreaterThan(second.resetMs - 1_000);
      } finally {
        await deletePrefix(client(), prefix);
      }
    });

    it('reads a rate-limit state an earlier version wrote (a bare TAT), and writes the TAT with its time', async () => {
      const prefix = uniquePrefix('rl-upgrade');
      const store = new RedisRateLimitStore({ client: client(), prefix });
      const rule = { limit: 5, periodMs: 60_000 }; // T = 12 000 ms
      const now = Date.now();
      try {
        // Four hits' worth of debt, as the earlier format stored it.
        await client().set(rateLimitKey(prefix, 'ws'), String(now + 48_000), 'PX', 48_000);
        expect(await store.hit('ws', rule, now)).toEqual(gcra(now + 48_000, rule, now).decision);
        expect(await client().get(rateLimitKey(prefix, 'ws'))).toBe(`${now + 60_000}:${now}`);
        expect((await store.hit('ws', rule, now)).allowed).toBe(false);
      } finally {
        await deletePrefix(client(), prefix);
      }
    });

    it('orders record fields byte-wise, as Buffer.compare does, whatever the server locale', async () => {
      // Pairs sharing prefixes of every length around the 8-byte steps, ending at, inside and
      // past them, with bytes above 0x7f (UTF-8) where a locale collation would differ.
      const pairs: Array<[string, string]> = [
        ['', ''],
        ['', 'a'],
        ['a', ''],
      ];
      const alphabet = ['0', '9', 'Z', 'a', '-', '"', 'é', '€', '\u0001'];
      let seed = 7;
      const pick = () => alphabet[(seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % alphabet.length]!;
      for (let shared = 0; shared <= 26; shared += 1) {
        const prefix = Array.from({ length: shared }, pick).join('');
        for (let tail = 0; tail < 6; tail += 1) {
          const a = prefix + Array.from({ length: tail % 3 }, pick).join('');
          const b = prefix + Array.from({ length: (tail + 1) % 3 }, pick).join('');
          pairs.push([a, b], [b, a], [a, a]);
        }
      }
      pairs.push(
        ['"2026-11-24T08:49:37.123Z"', '"2026-11-24T08:49:37.124Z"'],
        ['"2026-11-24T08:49:37.124Z"', '"2026-11-24T08:49:37.123Z"'],
      );
      const compare = namedScript({
        name: 'test_less_bytes',
        keys: ['any'],
        args: ['values[]'],
        lua: `${LUA_RECORD}
local out = {}
for i = 1, #values, 2 do out[#out + 1] = lessBytes(values[i], values[i + 1]) and 1 or 0 end
return out
`,
      });
      const reply = await runScript(
        client(),
        compare,
        { keys: { any: 'parley-test:less-bytes' }, args: { values: pairs.flat() } },
        Date.now() + 60_000,
      );
      expect(reply).toEqual(pairs.map(([a, b]) => (Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0 ? 1 : 0)));
    });

    it('refuses a key prefix with braces', () => {
      expect(() => new RedisStorage({ client: client(), prefix: 'bad{prefix}:' })).toThrow(TypeError);
    });
  });
  runApiKeyUpsertTests(client);
}
