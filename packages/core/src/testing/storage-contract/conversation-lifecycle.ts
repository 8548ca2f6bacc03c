/**
 * @module Storage contract: a conversation's activity (`updatedAt`, `lastMessageAt` set by
 * message appends), deleting a conversation, and reading one message.
 */
import type { Storage } from '../../ports/storage.js';
import type { Conversation } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { mutateResult, OTHER_WS, Records, WS } from './fixtures.js';

/** @internal Registers the `conversation activity` and `conversation delete` groups. */
export function conversationLifecycleTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'conversation activity', open, skip, (test) => {
    test('an append sets lastMessageAt and updatedAt, seen by get, every list and the next update', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual({
        ...conversation,
        lastMessageAt: null,
        updatedAt: conversation.createdAt,
      });
      const [, last] = await records.appendMessages(storage, WS, conversation.id, 2);
      const expected = { ...conversation, lastMessageAt: last!.createdAt, updatedAt: last!.createdAt };
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(expected);
      for (const filter of [
        {},
        { agentId: agent.id },
        { userId: 'u1' },
        { status: 'active' as const },
        { agentId: agent.id, userId: 'u1' },
      ]) {
        expect(
          (await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, ...filter })).items,
        ).toEqual([expected]);
      }
      const completed = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { status: 'completed' },
        where: [{ field: 'status', equals: 'active' }],
        event: records.draft(WS, 'conversation.completed'),
      });
      expect(completed).toEqual({ outcome: 'applied', record: { ...expected, status: 'completed' } });
      const page = await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'conversation.completed' });
      expect(page?.events.map((event) => event.data)).toEqual([{ ...expected, status: 'completed' }]);
    });

    test("a message racing a completing update is either refused or in the completed event's lastMessageAt", async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const message = records.message(conversation.id);
      const [outcome, result] = await Promise.all([
        storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) }),
        storage.conversations.update({ workspaceId: WS }, conversation.id, {
          set: { status: 'completed' },
          event: records.draft(WS, 'conversation.completed'),
        }),
      ]);
      const completed = result?.record;
      const [event] =
        (await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'conversation.completed' }))?.events ?? [];
      const expected = outcome === 'appended' ? message.createdAt : null;
      expect(completed?.lastMessageAt).toBe(expected);
      expect((event?.data as { lastMessageAt?: unknown } | undefined)?.lastMessageAt).toBe(expected);
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(completed);
    });

    test('a late append of an older message moves neither lastMessageAt nor updatedAt backwards', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const older = records.message(conversation.id);
      const newer = records.message(conversation.id);
      expect(await storage.messages.append({ workspaceId: WS }, newer, { event: records.sent(WS, newer) })).toBe(
        'appended',
      );
      expect(await storage.messages.append({ workspaceId: WS }, older, { event: records.sent(WS, older) })).toBe(
        'appended',
      );
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual({
        ...conversation,
        lastMessageAt: newer.createdAt,
        updatedAt: newer.createdAt,
      });
    });

    test('an update after a message keeps the later of its own updatedAt and the message time', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const [message] = await records.appendMessages(storage, WS, conversation.id, 1);
      const later = new Date(Date.parse(message!.createdAt) + 60_000).toISOString();
      const updated = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { metadata: { x: 1 } },
        touch: later,
      });
      expect(updated?.record).toEqual({
        ...conversation,
        metadata: { x: 1 },
        lastMessageAt: message!.createdAt,
        updatedAt: later,
      });
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(updated?.record);
      // `touch` never moves updatedAt backwards.
      const earlier = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { metadata: { x: 2 } },
        touch: conversation.createdAt,
      });
      expect(earlier?.record).toEqual({
        ...conversation,
        metadata: { x: 2 },
        lastMessageAt: message!.createdAt,
        updatedAt: later,
      });
    });
  });

  contractGroup(t, 'conversation delete', open, skip, (test) => {
    test('delete removes the conversation and its messages, from reads, lists and appends, and records no event', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const kept = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const doomed = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const [message, , last] = await records.appendMessages(storage, WS, doomed.id, 3);
      const lastMessageAt = last?.createdAt;
      const eventsBefore = (await storage.events.list({ workspaceId: WS }, { limit: 100 }))?.events.length;

      expect((await storage.conversations.delete({ workspaceId: WS }, doomed.id))?.record).toEqual({
        ...doomed,
        lastMessageAt: lastMessageAt!,
        updatedAt: lastMessageAt!,
      });
      expect(await storage.conversations.get({ workspaceId: WS }, doomed.id)).toBeNull();
      for (const filter of [
        {},
        { agentId: agent.id },
        { userId: 'u1' },
        { status: 'active' as const },
        { agentId: agent.id, userId: 'u1' },
      ]) {
        expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, ...filter })).toEqual({
          items: [kept],
          total: 1,
        });
      }
      expect(await storage.messages.get({ workspaceId: WS }, doomed.id, message!.id)).toBeNull();
      expect(await storage.messages.page({ workspaceId: WS }, doomed.id, { limit: 10 })).toEqual({
        messages: [],
        hasMore: false,
      });
      const late = records.message(doomed.id);
      expect(await storage.messages.append({ workspaceId: WS }, late, { event: records.sent(WS, late) })).toBe(
        'conversation_not_found',
      );
      expect((await storage.events.list({ workspaceId: WS }, { limit: 100 }))?.events.length).toBe(eventsBefore);
      expect(await storage.conversations.delete({ workspaceId: WS }, doomed.id)).toBeNull();
    });

    test('delete with an event records it, with the conversation as stored, in the same step; none when a condition fails or nothing is there', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const [message] = await records.appendMessages(storage, WS, conversation.id, 1);
      const before = (await storage.events.list({ workspaceId: WS }, { limit: 100 }))!.events.length;
      const refused = await storage.conversations.delete({ workspaceId: WS }, conversation.id, {
        event: records.draft(WS, 'conversation.deleted'),
        ifVersion: [],
      });
      expect(refused?.outcome).toBe('unmet');
      expect((await storage.events.list({ workspaceId: WS }, { limit: 100 }))!.events).toHaveLength(before);
      expect(
        (
          await storage.conversations.delete({ workspaceId: WS }, conversation.id, {
            event: records.draft(WS, 'conversation.deleted'),
          })
        )?.outcome,
      ).toBe('applied');
      const recorded = (await storage.events.list({ workspaceId: WS }, { limit: 100 }))!.events;
      expect(recorded).toHaveLength(before + 1);
      expect(recorded.at(-1)!.type).toBe('conversation.deleted');
      expect(recorded.at(-1)!.data).toEqual({
        ...conversation,
        lastMessageAt: message!.createdAt,
        updatedAt: message!.createdAt,
      });
      expect(
        await storage.conversations.delete({ workspaceId: WS }, conversation.id, {
          event: records.draft(WS, 'conversation.deleted'),
        }),
      ).toBeNull();
      expect((await storage.events.list({ workspaceId: WS }, { limit: 100 }))!.events).toHaveLength(before + 1);
    });

    test("delete answers false for an unknown id and for another workspace's conversation, which stays", async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      expect(await storage.conversations.delete({ workspaceId: WS }, records.id('conv'))).toBeNull();
      expect(await storage.conversations.delete({ workspaceId: OTHER_WS }, conversation.id)).toBeNull();
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
    });

    test('the agent can still be deleted afterwards, and its other conversations go with it', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const first = await records.insertConversation(storage, WS, agent.id);
      const second = await records.insertConversation(storage, WS, agent.id);
      expect((await storage.conversations.delete({ workspaceId: WS }, first.id))?.outcome).toBe('applied');
      expect(
        await storage.agents.delete({ workspaceId: WS }, agent.id, { event: records.draft(WS, 'agent.deleted') }),
      ).not.toBeNull();
      expect(await storage.conversations.get({ workspaceId: WS }, second.id)).toBeNull();
      expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [],
        total: 0,
      });
    });
  });

  contractGroup(t, 'message get', open, skip, (test) => {
    test('get returns the message of this conversation, and null for another conversation, workspace or id', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const other = await records.insertConversation(storage, WS, agent.id);
      const [first, second] = await records.appendMessages(storage, WS, conversation.id, 2);
      expect(await storage.messages.get({ workspaceId: WS }, conversation.id, first!.id)).toEqual(first);
      expect(await storage.messages.get({ workspaceId: WS }, conversation.id, second!.id)).toEqual(second);
      expect(await storage.messages.get({ workspaceId: WS }, other.id, first!.id)).toBeNull();
      expect(await storage.messages.get({ workspaceId: OTHER_WS }, conversation.id, first!.id)).toBeNull();
      expect(await storage.messages.get({ workspaceId: WS }, conversation.id, records.id('msg'))).toBeNull();
      const copy = await storage.messages.get({ workspaceId: WS }, conversation.id, first!.id);
      mutateResult(() => (copy!.content = 'changed'));
      expect(await storage.messages.get({ workspaceId: WS }, conversation.id, first!.id)).toEqual(first);
    });
  });
}
