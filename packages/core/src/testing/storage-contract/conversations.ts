/** @module Storage contract: the conversation store. */
import type { ConversationFilter, Storage } from '../../ports/storage.js';
import type { Conversation } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { ids, mutateResult, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.conversations`. */
export function conversationTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'conversations', open, skip, (test) => {
    test('insert answers inserted for an active agent; get returns an equal record', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = records.conversation(agent.id, { userId: 'user_1', metadata: { topic: { deep: [1, 2] } } });
      expect(
        await storage.conversations.insert({ workspaceId: WS }, conversation, {
          event: records.event(WS, 'conversation.started', conversation),
        }),
      ).toBe('inserted');
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
      const withNullUser = records.conversation(agent.id);
      expect(
        await storage.conversations.insert({ workspaceId: WS }, withNullUser, {
          event: records.event(WS, 'conversation.started', withNullUser),
        }),
      ).toBe('inserted');
      expect(await storage.conversations.get({ workspaceId: WS }, withNullUser.id)).toEqual(withNullUser);
    });

    test('insert answers agent_not_found and writes nothing when the agent does not exist', async (storage) => {
      const records = new Records();
      const conversation = records.conversation(records.id('agt'));
      expect(
        await storage.conversations.insert({ workspaceId: WS }, conversation, {
          event: records.event(WS, 'conversation.started', conversation),
        }),
      ).toBe('agent_not_found');
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toBeNull();
      expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [],
        total: 0,
      });
    });

    test('insert answers agent_inactive and writes nothing when the agent is inactive', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS, { status: 'inactive' });
      const conversation = records.conversation(agent.id);
      expect(
        await storage.conversations.insert({ workspaceId: WS }, conversation, {
          event: records.event(WS, 'conversation.started', conversation),
        }),
      ).toBe('agent_inactive');
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toBeNull();
      expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [],
        total: 0,
      });
    });

    test('get returns null for an unknown id', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      await records.insertConversation(storage, WS, agent.id);
      expect(await storage.conversations.get({ workspaceId: WS }, records.id('conv'))).toBeNull();
    });

    test('list returns newest first with offset paging; total counts all; offset beyond the end is empty', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const made = [
        records.conversation(agent.id),
        records.conversation(agent.id),
        records.conversation(agent.id),
        records.conversation(agent.id),
      ];
      for (const conversation of [made[2]!, made[0]!, made[3]!, made[1]!])
        await storage.conversations.insert({ workspaceId: WS }, conversation, {
          event: records.event(WS, 'conversation.started', conversation),
        });
      const newest = [...made].reverse();
      const list = (offset: number, limit: number) =>
        storage.conversations.list({ workspaceId: WS }, { offset, limit });

      expect(await list(0, 10)).toEqual({ items: newest, total: 4 });
      expect(ids((await list(0, 3)).items)).toEqual(ids(newest.slice(0, 3)));
      expect(await list(3, 3)).toEqual({ items: newest.slice(3), total: 4 });
      expect(await list(4, 3)).toEqual({ items: [], total: 4 });
      expect(await list(1000, 1)).toEqual({ items: [], total: 4 });
    });

    test('list filters by agentId, userId and status, alone and combined; total counts matches only', async (storage) => {
      const records = new Records();
      const ada = await records.insertAgent(storage, WS);
      const bob = await records.insertAgent(storage, WS);
      const specs: Array<[string, string | null, Conversation['status']]> = [
        [ada.id, 'u1', 'active'],
        [bob.id, 'u1', 'completed'],
        [ada.id, 'u2', 'completed'],
        [ada.id, null, 'active'],
        [bob.id, 'u2', 'active'],
        [ada.id, 'u1', 'completed'],
      ];
      const all: Conversation[] = [];
      for (const [agentId, userId, status] of specs)
        all.unshift(await records.insertConversation(storage, WS, agentId, { userId, status }));

      const check = async (filter: ConversationFilter, offset = 0, limit = 10) => {
        const matching = all.filter(
          (c) =>
            (filter.agentId === undefined || c.agentId === filter.agentId) &&
            (filter.userId === undefined || c.userId === filter.userId) &&
            (filter.status === undefined || c.status === filter.status),
        );
        const expected = { items: matching.slice(offset, offset + limit), total: matching.length };
        expect(
          await storage.conversations.list({ workspaceId: WS }, { offset, limit, ...filter }),
          JSON.stringify(filter),
        ).toEqual(expected);
        return matching.length;
      };

      expect(await check({})).toBe(6);
      expect(await check({ agentId: ada.id })).toBe(4);
      expect(await check({ agentId: bob.id })).toBe(2);
      expect(await check({ userId: 'u1' })).toBe(3);
      expect(await check({ status: 'completed' })).toBe(3);
      expect(await check({ agentId: ada.id, status: 'active' })).toBe(2);
      expect(await check({ agentId: ada.id, userId: 'u1' })).toBe(2);
      expect(await check({ agentId: ada.id, userId: 'u1', status: 'completed' })).toBe(1);
      expect(await check({ agentId: bob.id, userId: 'u2', status: 'completed' })).toBe(0);
      expect(await check({ userId: 'nobody' })).toBe(0);
      expect(await check({ agentId: records.id('agt') })).toBe(0);
      await check({ agentId: ada.id }, 1, 2);
      await check({ status: 'completed' }, 2, 5);
      await check({ userId: 'u1' }, 3, 5);
    });

    test('update merges the given fields into the stored conversation, moves it between the status lists, and resolves with it', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const completed: Conversation = { ...conversation, status: 'completed', metadata: { outcome: 'solved' } };
      const result = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { status: 'completed', metadata: { outcome: 'solved' } },
      });
      expect(result).toEqual({ outcome: 'applied', record: completed });
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(completed);
      for (const filter of [{}, { agentId: agent.id }, { userId: 'u1' }, { agentId: agent.id, userId: 'u1' }]) {
        expect(
          await storage.conversations.list(
            { workspaceId: WS },
            { offset: 0, limit: 10, status: 'completed', ...filter },
          ),
        ).toEqual({ items: [completed], total: 1 });
        expect(
          (await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, status: 'active', ...filter }))
            .total,
        ).toBe(0);
      }
    });

    test('update writes nothing and answers unmet with the stored conversation when a condition fails', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { status: 'completed' });
      const result = await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { metadata: { x: 1 } },
        where: [{ field: 'status', equals: 'active' }],
        event: records.draft(WS, 'conversation.completed'),
      });
      expect(result).toEqual({ outcome: 'unmet', record: conversation });
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
      expect(
        (await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'conversation.completed' }))?.events,
      ).toEqual([]);
    });

    test('update resolves with null for a missing conversation and stores nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const ghost = records.conversation(agent.id);
      expect(await storage.conversations.update({ workspaceId: WS }, ghost.id, { set: { metadata: {} } })).toBeNull();
      expect(await storage.conversations.get({ workspaceId: WS }, ghost.id)).toBeNull();
      expect((await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).total).toBe(0);
    });

    test('records handed out do not alias stored state: mutating an input or a result changes nothing stored', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = records.conversation(agent.id, { metadata: { tags: ['a'] } });
      const expected = structuredClone(conversation);
      await storage.conversations.insert({ workspaceId: WS }, conversation, {
        event: records.event(WS, 'conversation.started', conversation),
      });
      (conversation.metadata['tags'] as string[]).push('mutated input');
      conversation.status = 'completed';

      const got = (await storage.conversations.get({ workspaceId: WS }, expected.id))!;
      mutateResult(() => (got.metadata['tags'] as string[]).push('mutated result'));
      mutateResult(() => (got.userId = 'mutated'));
      const listed = (await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items[0]!;
      mutateResult(() => (listed.metadata['extra'] = true));

      expect(await storage.conversations.get({ workspaceId: WS }, expected.id)).toEqual(expected);
      expect((await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items).toEqual([
        expected,
      ]);
    });

    test('records handed out do not alias stored state: a later write changes no record read before it', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const got = (await storage.conversations.get({ workspaceId: WS }, conversation.id))!;
      const page = await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 });
      // An append moves the stored conversation's lastMessageAt and updatedAt.
      const message = records.message(conversation.id);
      await storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) });
      await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { metadata: { changed: true } },
      });

      expect(got).toEqual(conversation);
      expect(page).toEqual({ items: [conversation], total: 1 });
      const stored = (await storage.conversations.get({ workspaceId: WS }, conversation.id))!;
      expect([stored.lastMessageAt, stored.metadata]).toEqual([message.createdAt, { changed: true }]);
    });
  });
}
