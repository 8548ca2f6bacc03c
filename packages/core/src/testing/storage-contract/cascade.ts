/** @module Storage contract: deleting an agent deletes its conversations and their messages. */
import type { Storage } from '../../ports/storage.js';
import type { Conversation, Message } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { Records, WS } from './fixtures.js';

/** @internal Registers the tests of the agent delete cascade. */
export function cascadeTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;

  /** Two agents with two conversations each, each conversation with three messages. */
  async function world(storage: Storage) {
    const records = new Records();
    const doomed = await records.insertAgent(storage, WS);
    const kept = await records.insertAgent(storage, WS);
    const conversations: Array<{ conversation: Conversation; messages: Message[] }> = [];
    for (const agent of [doomed, kept, doomed, kept]) {
      const inserted = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const messages = await records.appendMessages(storage, WS, inserted.id, 3);
      const lastMessageAt = messages.at(-1)!.createdAt;
      conversations.push({ conversation: { ...inserted, lastMessageAt, updatedAt: lastMessageAt }, messages });
    }
    const of = (agentId: string) => conversations.filter(({ conversation }) => conversation.agentId === agentId);
    const deleted = records.draft(WS, 'agent.deleted');
    return { records, doomed, kept, deleted, doomedConversations: of(doomed.id), keptConversations: of(kept.id) };
  }

  contractGroup(t, 'agent delete cascade', open, skip, (test) => {
    test('deleting an agent removes its conversations and their messages', async (storage) => {
      const { doomed, deleted, doomedConversations } = await world(storage);
      expect(await storage.agents.delete({ workspaceId: WS }, doomed.id, { event: deleted })).toEqual({
        outcome: 'applied',
        record: doomed,
      });
      for (const { conversation, messages } of doomedConversations) {
        expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toBeNull();
        expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
          messages: [],
          hasMore: false,
        });
        expect(
          await storage.messages.page({ workspaceId: WS }, conversation.id, { before: messages[2]!.id, limit: 10 }),
        ).toBeNull();
        expect(
          await storage.conversations.update({ workspaceId: WS }, conversation.id, { set: { status: 'completed' } }),
        ).toBeNull();
      }
      expect(
        await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, agentId: doomed.id }),
      ).toEqual({ items: [], total: 0 });
    });

    test("deleting an agent leaves other agents' conversations and messages untouched", async (storage) => {
      const { doomed, kept, deleted, keptConversations } = await world(storage);
      await storage.agents.delete({ workspaceId: WS }, doomed.id, { event: deleted });
      expect(await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [kept],
        total: 1,
      });
      const remaining = keptConversations.map(({ conversation }) => conversation).reverse();
      expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: remaining,
        total: 2,
      });
      expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, userId: 'u1' })).toEqual({
        items: remaining,
        total: 2,
      });
      for (const { conversation, messages } of keptConversations) {
        expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
        expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
          messages,
          hasMore: false,
        });
      }
    });

    test('after the delete, no conversation or message can be added for the deleted agent', async (storage) => {
      const { records, doomed, deleted, doomedConversations } = await world(storage);
      await storage.agents.delete({ workspaceId: WS }, doomed.id, { event: deleted });
      const late = records.conversation(doomed.id);
      expect(
        await storage.conversations.insert({ workspaceId: WS }, late, {
          event: records.event(WS, 'conversation.started', late),
        }),
      ).toBe('agent_not_found');
      expect(await storage.conversations.get({ workspaceId: WS }, late.id)).toBeNull();
      const gone = doomedConversations[0]!.conversation;
      const message = records.message(gone.id);
      expect(await storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) })).toBe(
        'conversation_not_found',
      );
      expect(await storage.messages.page({ workspaceId: WS }, gone.id, { limit: 10 })).toEqual({
        messages: [],
        hasMore: false,
      });
      expect((await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).total).toBe(2);
    });

    test('no conversation or message outlives an agent deleted concurrently with writes to it', async (storage) => {
      const { records, doomed, deleted, doomedConversations } = await world(storage);
      const target = doomedConversations[0]!.conversation;
      const conversations = Array.from({ length: 10 }, () => records.conversation(doomed.id));
      const messages = Array.from({ length: 10 }, () => records.message(target.id));
      await Promise.all([
        ...conversations.map((conversation) =>
          storage.conversations.insert({ workspaceId: WS }, conversation, {
            event: records.event(WS, 'conversation.started', conversation),
          }),
        ),
        ...messages
          .slice(0, 5)
          .map((message) =>
            storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) }),
          ),
        storage.agents.delete({ workspaceId: WS }, doomed.id, { event: deleted }),
        ...messages
          .slice(5)
          .map((message) =>
            storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) }),
          ),
      ]);
      for (const conversation of conversations)
        expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toBeNull();
      expect(
        await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 100, agentId: doomed.id }),
      ).toEqual({ items: [], total: 0 });
      expect(await storage.messages.page({ workspaceId: WS }, target.id, { limit: 100 })).toEqual({
        messages: [],
        hasMore: false,
      });
    });

    test('an agent without conversations is deleted alone', async (storage) => {
      const { records, kept, keptConversations } = await world(storage);
      const lonely = await records.insertAgent(storage, WS);
      expect(
        await storage.agents.delete({ workspaceId: WS }, lonely.id, { event: records.draft(WS, 'agent.deleted') }),
      ).toEqual({ outcome: 'applied', record: lonely });
      expect((await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).total).toBe(4);
      expect(await storage.conversations.get({ workspaceId: WS }, keptConversations[0]!.conversation.id)).toEqual(
        keptConversations[0]!.conversation,
      );
      expect(await storage.agents.get({ workspaceId: WS }, kept.id)).toEqual(kept);
    });
  });
}
