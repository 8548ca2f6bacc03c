/**
 * @module Test support: what the storage contract cannot see of the event log on Redis — events
 * written in the same script as the change (a failing script or precondition leaves neither),
 * bounded trimming, hints only into an empty outbox, the outbox sweep recovering a lost hint,
 * merges inside the script under a real concurrent PATCH race, and every key of one write sharing
 * the workspace's hash tag.
 */
import { inspect } from 'node:util';
import { firstIdAt } from '@parley/core/adapter';
import { Records } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import type { RedisClient, RedisRunner } from '../src/connection.js';
import { outboxKeys, workspaceKeys } from '../src/keys.js';
import { RedisStorage, type RedisStorageOptions } from '../src/redis-storage.js';
import { positions, type LuaScript, type ScriptCall } from '../src/script.js';
import { DELIVERY_TRIM_STEP } from '../src/stores/delivery-store.lua.js';
import { trimDue } from '../src/stores/delivery-store.js';
import { TRIM_EVERY, TRIM_STEP } from '../src/stores/event-log.lua.js';
import { idTime, ULID_DIGITS } from '../src/stores/event-log.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

const WS = 'ws_event_log';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `body` with a storage under a fresh prefix; closes it and deletes the prefix afterwards. */
function withStorage(
  client: () => RedisClient,
  body: (storage: RedisStorage, prefix: string) => Promise<void>,
  options: Partial<RedisStorageOptions> = {},
) {
  return async () => {
    const prefix = uniquePrefix('events');
    const storage = new RedisStorage({ client: client(), prefix, ...options } as RedisStorageOptions);
    try {
      await body(storage, prefix);
    } finally {
      await storage.close();
      await deletePrefix(client(), prefix);
    }
  };
}

/** The hash tag Redis Cluster hashes for `key`: between the first `{` and the next `}`, if not empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Registers the event log tests over `client()`. */
export function runEventLogTests(client: () => RedisClient): void {
  describe('Redis event log', () => {
    it(
      'records neither the change nor its event when the script fails, and the error carries no arguments',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const keys = workspaceKeys(prefix, WS);
        const kept = await records.insertAgent(storage, WS);
        // A corrupted sequence counter makes INCR fail inside the write script.
        await client().set(keys.eventSeq, 'not-a-number');
        const agent = records.agent({ name: 'Confidential Agent Name' });
        const error = await storage.agents
          .insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(Error);
        expect(inspect(error, { depth: 10 })).not.toContain('Confidential Agent Name');
        const renamed = storage.agents.update({ workspaceId: WS }, kept.id, {
          set: { name: 'Confidential Rename' },
          event: records.draft(WS, 'agent.updated'),
        });
        await expect(renamed).rejects.toThrow();
        expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toBeNull();
        expect(await storage.agents.get({ workspaceId: WS }, kept.id)).toEqual(kept);
        expect(await client().zcard(keys.agents)).toBe(1);
        expect(await client().hlen(keys.event)).toBe(1);
        expect(await client().llen(keys.outbox)).toBe(1);
        expect(await client().zcard(keys.eventsOfType('agent.updated'))).toBe(0);
      }),
    );

    it(
      'records no event, takes no sequence number and queues nothing when a precondition fails',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const keys = workspaceKeys(prefix, WS);
        const inactive = await records.insertAgent(storage, WS, { status: 'inactive' });
        const agent = await records.insertAgent(storage, WS);
        const conversation = await records.insertConversation(storage, WS, agent.id);
        await storage.conversations.update({ workspaceId: WS }, conversation.id, {
          set: { status: 'completed' },
          event: records.draft(WS, 'conversation.completed'),
        });
        const state = async () => [
          await client().get(keys.eventSeq),
          await client().hlen(keys.event),
          await client().llen(keys.outbox),
          await client().zcard(keys.events),
        ];
        const before = await state();
        const refused = records.conversation(inactive.id);
        expect(
          await storage.conversations.insert({ workspaceId: WS }, refused, {
            event: records.event(WS, 'conversation.started', refused),
          }),
        ).toBe('agent_inactive');
        const late = records.message(conversation.id);
        expect(await storage.messages.append({ workspaceId: WS }, late, { event: records.sent(WS, late) })).toBe(
          'conversation_completed',
        );
        const orphan = records.message('conv_missing');
        expect(await storage.messages.append({ workspaceId: WS }, orphan, { event: records.sent(WS, orphan) })).toBe(
          'conversation_not_found',
        );
        expect(await state()).toEqual(before);
        expect(await client().hlen(keys.conv)).toBe(1);
        expect(await client().exists(keys.msg(conversation.id), keys.msg('conv_missing'))).toBe(0);
      }),
    );

    it(
      `trims expired events at most ${TRIM_STEP} per ${TRIM_EVERY} writes (log, type indexes, outbox); reads and takes skip the rest`,
      withStorage(
        client,
        async (storage, prefix) => {
          const records = new Records();
          const keys = workspaceKeys(prefix, WS);
          const old = TRIM_STEP + 36;
          for (let i = 0; i < old; i += 1) await records.insertAgent(storage, WS);
          // Every event so far leaves the retention (the old ones were written well within it).
          await sleep(1_600);
          // Writes up to the next multiple of TRIM_EVERY: only the last of them trims.
          const fresh: string[] = [];
          const count = TRIM_EVERY - (old % TRIM_EVERY);
          for (let i = 0; i < count - 1; i += 1) fresh.push((await records.insertAgent(storage, WS)).id);
          expect(await client().hlen(keys.event)).toBe(old + count - 1);
          fresh.push((await records.insertAgent(storage, WS)).id);
          const left = old - TRIM_STEP + count;
          expect(await client().hlen(keys.event)).toBe(left);
          expect(await client().zcard(keys.events)).toBe(left);
          expect(await client().zcard(keys.eventsOfType('agent.created'))).toBe(left);
          expect(await client().llen(keys.outbox)).toBe(left);
          // Reads hide the expired ones not trimmed yet.
          const page = await storage.events.list({ workspaceId: WS }, { limit: 100 });
          expect(page?.events.map((event) => (event.data as { id: string }).id)).toEqual(fresh);
          // And the outbox hands on none of them, dropping their ids.
          const batch = await storage.outbox.take(100, 0);
          expect(batch?.events.map((event) => (event.data as { id: string }).id)).toEqual(fresh);
          await storage.outbox.ack(batch!);
          expect(await client().llen(keys.outbox)).toBe(0);
        },
        { eventRetentionMs: 1_500 },
      ),
    );

    it(
      'trims expired delivery attempts on the records whose id is due, up to DELIVERY_TRIM_STEP each, and reads hide the rest',
      withStorage(
        client,
        async (storage, prefix) => {
          const records = new Records();
          const keys = workspaceKeys(prefix, WS);
          const endpoint = await records.insertEndpoint(storage, WS);
          const event = records.event(WS, 'agent.created', records.agent());
          // Attempt ids in increasing order whose last ULID character is due (digit 0) or not (digit 1).
          // Ids of the real time, as the worker makes them: retention goes by their time.
          let base = records.attempt(endpoint.id, event).id.slice(0, -3);
          let next = 0;
          const idEnding = (last: '0' | '1') =>
            `${base}${ULID_DIGITS[Math.floor(next / 32)]}${ULID_DIGITS[next++ % 32]}${last}`;
          expect([trimDue(idEnding('0')), trimDue(idEnding('1')), trimDue('not-a-ulid!')]).toEqual([true, false, true]);
          // Retention goes by the ids' time: an id made at t sorts from firstIdAt(t) up, and below firstIdAt(t + 1).
          const madeAt = idTime(`${base}000`)!;
          expect([
            firstIdAt('dlv', madeAt) <= `${base}000`,
            `${base}ZZZ` < firstIdAt('dlv', madeAt + 1),
            idTime(`${firstIdAt('dlv', madeAt)}0000000000000000`),
          ]).toEqual([true, true, madeAt]);
          const old = DELIVERY_TRIM_STEP + 6;
          for (let i = 0; i < old; i += 1)
            await storage.deliveries.record(
              { workspaceId: WS },
              records.attempt(endpoint.id, event, { id: idEnding('1') }),
            );
          expect(await client().zcard(keys.deliveries(endpoint.id))).toBe(old);
          await sleep(1_600);
          base = records.attempt(endpoint.id, event).id.slice(0, -3);
          // A record not due trims nothing; reads already hide the expired attempts.
          const kept = records.attempt(endpoint.id, event, { id: idEnding('1') });
          await storage.deliveries.record({ workspaceId: WS }, kept);
          expect(await client().zcard(keys.deliveries(endpoint.id))).toBe(old + 1);
          expect(
            (await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 100 }))?.deliveries.map(
              (each) => each.id,
            ),
          ).toEqual([kept.id]);
          // A due one removes DELIVERY_TRIM_STEP of them, from the oldest.
          const due = records.attempt(endpoint.id, event, { id: idEnding('0') });
          await storage.deliveries.record({ workspaceId: WS }, due);
          expect(await client().hlen(keys.delivery(endpoint.id))).toBe(old + 2 - DELIVERY_TRIM_STEP);
          expect(await client().zcard(keys.deliveries(endpoint.id))).toBe(old + 2 - DELIVERY_TRIM_STEP);
        },
        { eventRetentionMs: 1_500 },
      ),
    );

    it(
      'hints only into an empty outbox: an event behind a taken batch is hinted by that batch’s ack',
      withStorage(
        client,
        async (storage, prefix) => {
          const records = new Records();
          const { dirty } = outboxKeys(prefix);
          const first = records.agent();
          await storage.agents.insert({ workspaceId: WS }, first, { event: records.event(WS, 'agent.created', first) });
          const taken = await storage.outbox.take(10, 1_000);
          expect(taken?.events.map((event) => (event.data as { id: string }).id)).toEqual([first.id]);
          const second = records.agent();
          await storage.agents.insert({ workspaceId: WS }, second, {
            event: records.event(WS, 'agent.created', second),
          });
          await sleep(100);
          expect(await client().zscore(dirty, WS)).toBeNull();
          await storage.outbox.ack(taken!);
          expect(await client().zscore(dirty, WS)).not.toBeNull();
          // Found by the ack's hint, not by a sweep (the next is 10 s away).
          const next = await storage.outbox.take(10, 1_000);
          expect(next?.events.map((event) => (event.data as { id: string }).id)).toEqual([second.id]);
          await storage.outbox.ack(next!);
          expect(await storage.outbox.take(10, 0)).toBeNull();
        },
        { outboxLeaseMs: 60_000 },
      ),
    );

    it(
      'hands on the events of a workspace whose hint was lost, at the next sweep',
      withStorage(
        client,
        async (taker, prefix) => {
          const records = new Records();
          const { dirty } = outboxKeys(prefix);
          // The taker sweeps now (nothing yet), then every 300 ms (its lease).
          expect(await taker.outbox.take(10, 0)).toBeNull();
          const writer = new RedisStorage({ client: client(), prefix });
          try {
            const agent = records.agent();
            const event = records.event(WS, 'agent.created', agent);
            await writer.agents.insert({ workspaceId: WS }, agent, { event: event });
            // The hint is sent after the write without waiting: lose it once it landed.
            for (let i = 0; i < 100 && (await client().zscore(dirty, WS)) === null; i += 1) await sleep(10);
            expect(await client().zrem(dirty, WS)).toBe(1);
            const batch = await taker.outbox.take(10, 5_000);
            expect(batch?.events).toEqual([event]);
            await taker.outbox.ack(batch!);
            expect(await taker.outbox.take(10, 0)).toBeNull();
          } finally {
            await writer.close();
          }
        },
        { outboxLeaseMs: 300 },
      ),
    );

    it(
      'ends a waiting take with null when the storage closes, and refuses a non-positive retention or lease',
      withStorage(client, async (storage) => {
        const waiting = storage.outbox.take(10, 20_000);
        await sleep(200);
        await storage.close();
        expect(await waiting).toBeNull();
        expect(() => new RedisStorage({ client: client(), eventRetentionMs: 0 })).toThrow(RangeError);
        expect(() => new RedisStorage({ client: client(), outboxLeaseMs: -1 })).toThrow(RangeError);
      }),
    );

    it(
      'keeps both of two concurrent updates of different fields (50 trials, two connections)',
      withStorage(client, async (storage, prefix) => {
        const other = client().duplicate();
        other.on('error', () => {});
        const racing = new RedisStorage({ client: other, prefix });
        try {
          const records = new Records();
          for (let trial = 0; trial < 50; trial += 1) {
            const agent = await records.insertAgent(storage, WS);
            const patch = (store: RedisStorage, fields: { name?: string; description?: string }) =>
              store.agents.update({ workspaceId: WS }, agent.id, {
                set: fields,
                event: records.draft(WS, 'agent.updated'),
              });
            await Promise.all([
              patch(storage, { name: `name ${trial}` }),
              patch(racing, { description: `description ${trial}` }),
            ]);
            const stored = await storage.agents.get({ workspaceId: WS }, agent.id);
            expect(stored).toMatchObject({ name: `name ${trial}`, description: `description ${trial}` });
          }
          // Exactly one event per update: every one applied.
          expect(await client().zcard(workspaceKeys(prefix, WS).eventsOfType('agent.updated'))).toBe(100);
        } finally {
          await racing.close();
          await other.quit();
        }
      }),
    );

    it(
      'filters deliveries by the eventId field only (not by text in a response body), and deletes the log with its endpoint',
      withStorage(client, async (storage, prefix) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const endpoint = await records.insertEndpoint(storage, WS);
        const [first, second] = [records.event(WS, 'agent.updated', agent), records.event(WS, 'agent.updated', agent)];
        // A receiver echoing another event's id in its body, JSON-looking and all.
        const echo = records.attempt(endpoint.id, first, { responseBody: `{"eventId":"${second.id}"}` });
        const real = records.attempt(endpoint.id, second, { status: 500 });
        await storage.deliveries.record({ workspaceId: WS }, echo);
        await storage.deliveries.record({ workspaceId: WS }, real);
        expect(
          await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10, eventId: second.id }),
        ).toEqual({ deliveries: [real], hasMore: false });
        expect(
          await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10, eventId: first.id }),
        ).toEqual({ deliveries: [echo], hasMore: false });
        expect([
          ...(await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, [first.id, second.id])),
        ]).toEqual([first.id]);
        const keys = workspaceKeys(prefix, WS);
        const logKeys = [keys.delivery(endpoint.id), keys.deliveries(endpoint.id), keys.delivered(endpoint.id)];
        expect(await client().exists(...logKeys)).toBe(3);
        expect((await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id))?.outcome).toBe('applied');
        expect(await client().exists(...logKeys)).toBe(0);
      }),
    );

    it(
      'passes every script only keys of one hash tag: the workspace’s',
      withStorage(client, async (storage, prefix) => {
        const runner = (storage as unknown as { runner: RedisRunner }).runner;
        const calls: Array<{ script: string; tags: Set<string> }> = [];
        const original = runner.script.bind(runner);
        runner.script = <K extends string, A extends string>(script: LuaScript<K, A>, call: ScriptCall<K, A>) => {
          calls.push({ script: script.name, tags: new Set(positions(script, call).keys.map(hashTag)) });
          return original(script, call);
        };
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        await storage.agents.update({ workspaceId: WS }, agent.id, { set: { status: 'inactive' } });
        await storage.agents.update({ workspaceId: WS }, agent.id, { set: { status: 'active' } });
        const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u{1}' });
        const [message] = await records.appendMessages(storage, WS, conversation.id, 1);
        await storage.conversations.update({ workspaceId: WS }, conversation.id, { set: { status: 'completed' } });
        const endpoint = await records.insertEndpoint(storage, WS);
        await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, { set: { enabled: false } });
        const event = records.event(WS, 'message.sent', message!);
        await storage.deliveries.record({ workspaceId: WS }, records.attempt(endpoint.id, event));
        await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10, eventId: event.id });
        await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'message.sent' });
        const batch = await storage.outbox.take(10, 0);
        await storage.outbox.ack(batch!);
        await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id);
        await storage.agents.delete({ workspaceId: WS }, agent.id, { event: records.draft(WS, 'agent.deleted') });
        expect(calls.length).toBeGreaterThan(15);
        for (const { script, tags } of calls) {
          // The sweep's check is per workspace too; only the registry and hints are global (plain commands).
          expect({ script, tags: [...tags] }).toEqual({ script, tags: [WS] });
        }
      }),
    );
  });
}
