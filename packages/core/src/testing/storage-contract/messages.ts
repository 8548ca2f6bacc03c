/** @module Storage contract: appending messages and the basic shape of history pages. */
import type { Storage } from '../../ports/storage.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { ids, mutateResult, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.messages.append` and simple `page` reads. */
export function messageTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'messages', open, skip, (test) => {
    test('append answers appended for an active conversation; the page returns an equal record', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const message = records.message(conversation.id, { role: 'system', metadata: { source: { kind: 'import' } } });
      expect(await storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) })).toBe(
        'appended',
      );
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages: [message],
        hasMore: false,
      });
    });

    test('append answers conversation_not_found and stores nothing when the conversation does not exist', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = records.conversation(agent.id);
      const message = records.message(conversation.id);
      expect(await storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) })).toBe(
        'conversation_not_found',
      );
      // The conversation appearing later must not reveal the refused message.
      expect(
        await storage.conversations.insert({ workspaceId: WS }, conversation, {
          event: records.event(WS, 'conversation.started', conversation),
        }),
      ).toBe('inserted');
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages: [],
        hasMore: false,
      });
    });

    test('messages are kept in id order even when appended out of order', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const made = Array.from({ length: 7 }, () => records.message(conversation.id));
      for (const index of [3, 0, 6, 1, 5, 2, 4])
        expect(
          await storage.messages.append({ workspaceId: WS }, made[index]!, { event: records.sent(WS, made[index]!) }),
        ).toBe('appended');

      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages: made,
        hasMore: false,
      });
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 3 })).toEqual({
        messages: made.slice(4),
        hasMore: true,
      });
      expect(
        await storage.messages.page({ workspaceId: WS }, conversation.id, { before: made[4]!.id, limit: 3 }),
      ).toEqual({
        messages: made.slice(1, 4),
        hasMore: true,
      });
      expect(
        await storage.messages.page({ workspaceId: WS }, conversation.id, { before: made[1]!.id, limit: 3 }),
      ).toEqual({
        messages: made.slice(0, 1),
        hasMore: false,
      });
    });

    test('append answers conversation_completed and stores nothing once the conversation is completed', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { status: 'completed' });
      const message = records.message(conversation.id);
      expect(await storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) })).toBe(
        'conversation_completed',
      );
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages: [],
        hasMore: false,
      });
    });

    test('an existing conversation without messages has an empty page', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 1 })).toEqual({
        messages: [],
        hasMore: false,
      });
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 100 })).toEqual({
        messages: [],
        hasMore: false,
      });
    });

    test('an unknown conversation is an empty page without `before`, and null with one', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const [message] = await records.appendMessages(storage, WS, conversation.id, 1);
      const unknown = records.id('conv');
      expect(await storage.messages.page({ workspaceId: WS }, unknown, { limit: 10 })).toEqual({
        messages: [],
        hasMore: false,
      });
      expect(await storage.messages.page({ workspaceId: WS }, unknown, { before: message!.id, limit: 10 })).toBeNull();
    });

    test('each conversation pages only its own messages', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const first = await records.insertConversation(storage, WS, agent.id);
      const second = await records.insertConversation(storage, WS, agent.id);
      const firstMessages = [];
      const secondMessages = [];
      for (let index = 0; index < 4; index += 1) {
        firstMessages.push(...(await records.appendMessages(storage, WS, first.id, 1)));
        secondMessages.push(...(await records.appendMessages(storage, WS, second.id, 1)));
      }
      expect(ids((await storage.messages.page({ workspaceId: WS }, first.id, { limit: 10 }))!.messages)).toEqual(
        ids(firstMessages),
      );
      expect(ids((await storage.messages.page({ workspaceId: WS }, second.id, { limit: 10 }))!.messages)).toEqual(
        ids(secondMessages),
      );
      expect(
        await storage.messages.page({ workspaceId: WS }, first.id, { before: firstMessages[2]!.id, limit: 10 }),
      ).toEqual({
        messages: firstMessages.slice(0, 2),
        hasMore: false,
      });
    });

    test('messages handed out do not alias stored state: mutating an input or a result changes nothing stored, and a later append changes no page read before it', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const message = records.message(conversation.id, { metadata: { tags: ['x'] } });
      const expected = structuredClone(message);
      await storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) });
      message.content = 'mutated input';
      (message.metadata['tags'] as string[]).push('mutated input');

      const page = (await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 }))!;
      mutateResult(() => (page.messages[0]!.content = 'mutated result'));
      mutateResult(() => (page.messages[0]!.metadata['tags'] as string[]).push('mutated result'));
      const got = (await storage.messages.get({ workspaceId: WS }, conversation.id, expected.id))!;
      mutateResult(() => (got.role = 'system'));
      page.messages.length = 0;

      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages: [expected],
        hasMore: false,
      });
      const read = (await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 }))!;
      const next = records.message(conversation.id);
      await storage.messages.append({ workspaceId: WS }, next, { event: records.sent(WS, next) });
      expect(read).toEqual({ messages: [expected], hasMore: false });
    });
  });
}
