/** @module Storage contract: every write that emits an event records it with the change, and only then. */
import type { Storage } from '../../ports/storage.js';
import { recordVersion } from '../../record-version.js';
import type { DomainEvent } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { OTHER_WS, Records, WS } from './fixtures.js';

/** Every retained event of `workspaceId`, in commit order. */
export async function logOf(storage: Storage, workspaceId = WS): Promise<DomainEvent[]> {
  const events: DomainEvent[] = [];
  for (let guard = 0; guard < 1000; guard += 1) {
    const page = await storage.events.list({ workspaceId }, { after: events.at(-1)?.id, limit: 100 });
    if (!page) throw new Error('Contract: events.list answered null for the id of an event it just listed.');
    events.push(...page.events);
    if (!page.hasMore) return events;
  }
  throw new Error('Contract: the event log did not end.');
}

/** Takes everything the outbox hands out within a short wait, acknowledging each batch. */
export async function drainOutbox(storage: Storage): Promise<DomainEvent[]> {
  const events: DomainEvent[] = [];
  for (let guard = 0; guard < 1000; guard += 1) {
    const batch = await storage.outbox.take(100, 50);
    if (!batch) return events;
    events.push(...batch.events);
    await storage.outbox.ack(batch);
  }
  throw new Error('Contract: the outbox did not run dry.');
}

/** @internal Registers the tests of event recording by the writes of every store. */
export function eventRecordingTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'event recording', open, skip, (test) => {
    test('agents.insert records its event: readable by id, listed, and handed to the outbox', async (storage) => {
      const records = new Records();
      const agent = records.agent();
      const event = records.event(WS, 'agent.created', agent);
      await storage.agents.insert({ workspaceId: WS }, agent, { event: event });
      expect(await storage.events.get({ workspaceId: WS }, event.id)).toEqual(event);
      expect(await logOf(storage)).toEqual([event]);
      expect(await drainOutbox(storage)).toEqual([event]);
    });

    test('agents.update records its event, data the agent as stored after the change; an unmet or event-less change records nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const draft = records.draft(WS, 'agent.updated');
      await storage.agents.update({ workspaceId: WS }, agent.id, { set: { name: 'Renamed' }, event: draft });
      await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { name: 'Refused' },
        ifVersion: [1],
        event: records.draft(WS, 'agent.updated'),
      });
      await storage.agents.update({ workspaceId: WS }, agent.id, { set: { description: 'silent' } });
      const log = await logOf(storage);
      expect(log.map((recorded) => recorded.type)).toEqual(['agent.created', 'agent.updated']);
      expect(log[1]).toEqual({ ...draft, data: { ...agent, name: 'Renamed' } });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual({
        ...agent,
        name: 'Renamed',
        description: 'silent',
      });
    });

    test('agents.delete records its event with the stored agent as data; a missing agent records nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const draft = records.draft(WS, 'agent.deleted');
      expect(await storage.agents.delete({ workspaceId: WS }, agent.id, { event: draft })).toEqual({
        outcome: 'applied',
        record: agent,
      });
      expect(
        await storage.agents.delete({ workspaceId: WS }, agent.id, { event: records.draft(WS, 'agent.deleted') }),
      ).toBeNull();
      expect(
        await storage.agents.delete({ workspaceId: WS }, records.id('agt'), {
          event: records.draft(WS, 'agent.deleted'),
        }),
      ).toBeNull();
      const log = await logOf(storage);
      expect(log.map((recorded) => recorded.type)).toEqual(['agent.created', 'agent.deleted']);
      expect(log[1]).toEqual({ ...draft, data: agent });
    });

    test('agents.delete whose conditions fail deletes nothing and records nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      expect(
        await storage.agents.delete({ workspaceId: WS }, agent.id, {
          event: records.draft(WS, 'agent.deleted'),
          ifVersion: [2],
        }),
      ).toEqual({ outcome: 'unmet', record: agent });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
      expect((await logOf(storage)).map((recorded) => recorded.type)).toEqual([
        'agent.created',
        'conversation.started',
      ]);
    });

    test('conversations.insert records its event only when it inserts', async (storage) => {
      const records = new Records();
      const active = await records.insertAgent(storage, WS);
      const inactive = await records.insertAgent(storage, WS, { status: 'inactive' });
      const started = records.conversation(active.id);
      const startedEvent = records.event(WS, 'conversation.started', started);
      expect(await storage.conversations.insert({ workspaceId: WS }, started, { event: startedEvent })).toBe(
        'inserted',
      );
      for (const agentId of [inactive.id, records.id('agt')]) {
        const refused = records.conversation(agentId);
        expect(
          await storage.conversations.insert({ workspaceId: WS }, refused, {
            event: records.event(WS, 'conversation.started', refused),
          }),
        ).not.toBe('inserted');
      }
      const log = await logOf(storage);
      expect(log.map((recorded) => recorded.type)).toEqual(['agent.created', 'agent.created', 'conversation.started']);
      expect(log[2]).toEqual(startedEvent);
    });

    test('conversations.update records the completion event; an unmet change records nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const complete = () => ({
        set: { status: 'completed' as const },
        where: [{ field: 'status' as const, equals: 'active' }],
        event: records.draft(WS, 'conversation.completed'),
      });
      const change = complete();
      await storage.conversations.update({ workspaceId: WS }, conversation.id, change);
      await storage.conversations.update({ workspaceId: WS }, conversation.id, complete());
      const log = await logOf(storage);
      expect(log.map((recorded) => recorded.type)).toEqual([
        'agent.created',
        'conversation.started',
        'conversation.completed',
      ]);
      expect(log[2]).toEqual({ ...change.event, data: { ...conversation, status: 'completed' } });
    });

    test('conversations.update records a complete event as given; with keepVersion and no set the conversation and its version stay', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const failed = records.event(WS, 'reply.failed', {
        conversationId: conversation.id,
        inReplyTo: null,
        error: 'The provider failed.',
      });
      const result = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        keepVersion: true,
        event: failed,
      });
      expect(result?.outcome).toBe('applied');
      expect(recordVersion(result!.record)).toBe(1);
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
      const paused = records.event(WS, 'reply.requires_action', {
        conversationId: conversation.id,
        inReplyTo: null,
        toolCalls: [],
      });
      expect(
        (
          await storage.conversations.update({ workspaceId: WS }, conversation.id, {
            where: [{ field: 'status', equals: 'completed' }],
            event: paused,
          })
        )?.outcome,
      ).toBe('unmet');
      const log = await logOf(storage);
      expect(log.map((recorded) => recorded.type)).toEqual(['agent.created', 'conversation.started', 'reply.failed']);
      expect(log[2]).toEqual(failed);
    });

    test('messages.append records its event only when it appends', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const open = await records.insertConversation(storage, WS, agent.id);
      const closed = await records.insertConversation(storage, WS, agent.id, { status: 'completed' });
      const message = records.message(open.id, { role: 'assistant' });
      const event = records.sent(WS, message);
      expect(await storage.messages.append({ workspaceId: WS }, message, { event: event })).toBe('appended');
      for (const conversationId of [closed.id, records.id('conv')]) {
        const refused = records.message(conversationId);
        expect(
          await storage.messages.append({ workspaceId: WS }, refused, { event: records.sent(WS, refused) }),
        ).not.toBe('appended');
      }
      const log = await logOf(storage);
      expect(log.map((recorded) => recorded.type)).toEqual([
        'agent.created',
        'conversation.started',
        'conversation.started',
        'message.received',
      ]);
      expect(log[3]).toEqual(event);
    });

    test('messages.append called at once for several conversations: each answers as if alone, and every message appended is stored with its event', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const first = await records.insertConversation(storage, WS, agent.id);
      const second = await records.insertConversation(storage, WS, agent.id);
      const closed = await records.insertConversation(storage, WS, agent.id, { status: 'completed' });
      const setUp = (await logOf(storage)).length;
      const targets = [first.id, second.id, closed.id, first.id, records.id('conv'), second.id, first.id];
      const messages = targets.map((conversationId, index) =>
        records.message(conversationId, { role: index % 2 === 0 ? 'user' : 'assistant' }),
      );
      const events = messages.map((message) => records.sent(WS, message));

      const outcomes = await Promise.all(
        messages.map((message, index) =>
          storage.messages.append({ workspaceId: WS }, message, { event: events[index]! }),
        ),
      );

      expect(outcomes).toEqual([
        'appended',
        'appended',
        'conversation_completed',
        'appended',
        'conversation_not_found',
        'appended',
        'appended',
      ]);
      const appended = [0, 1, 3, 5, 6];
      expect((await storage.messages.page({ workspaceId: WS }, first.id, { limit: 10 }))!.messages).toEqual([
        messages[0],
        messages[3],
        messages[6],
      ]);
      expect((await storage.messages.page({ workspaceId: WS }, second.id, { limit: 10 }))!.messages).toEqual([
        messages[1],
        messages[5],
      ]);
      expect((await storage.messages.page({ workspaceId: WS }, closed.id, { limit: 10 }))!.messages).toEqual([]);
      // Concurrent calls may commit in any order (on a pool of connections, say).
      const byId = (list: DomainEvent[]) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(byId((await logOf(storage)).slice(setUp))).toEqual(appended.map((index) => events[index]));
      const received = await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'message.received' });
      expect(byId(received!.events)).toEqual([events[1], events[3], events[5]]);
      const stored = (await storage.conversations.get({ workspaceId: WS }, first.id))!;
      expect(stored.lastMessageAt).toBe(messages[6]!.createdAt);
      // Version 1 on insert, and one more per message appended.
      expect(recordVersion(stored)).toBe(1 + 3);
      expect(recordVersion((await storage.conversations.get({ workspaceId: WS }, second.id))!)).toBe(1 + 2);
    });

    test('webhook endpoint writes record no event, even when a change carries one', async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS);
      await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, {
        set: { enabled: false },
        event: records.draft(WS, 'agent.updated'),
      });
      await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id);
      expect(await logOf(storage)).toEqual([]);
      expect(await storage.outbox.take(10, 50)).toBeNull();
    });

    test('each workspace records its own events', async (storage) => {
      const records = new Records();
      const mine = await records.insertAgent(storage, WS);
      const theirs = await records.insertAgent(storage, OTHER_WS);
      expect((await logOf(storage, WS)).map((event) => (event.data as { id: string }).id)).toEqual([mine.id]);
      expect((await logOf(storage, OTHER_WS)).map((event) => (event.data as { id: string }).id)).toEqual([theirs.id]);
    });
  });
}
