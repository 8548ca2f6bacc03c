/** @module Storage contract: history paging with `before` or `after` and `limit`, edge cases included. */
import type { MessagePage, Storage } from '../../ports/storage.js';
import type { Message } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { ids, OTHER_WS, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.messages.page`. */
export function messagePageTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;

  /** A conversation holding `count` messages, oldest first. */
  async function history(storage: Storage, count: number) {
    const records = new Records();
    const agent = await records.insertAgent(storage, WS);
    const conversation = await records.insertConversation(storage, WS, agent.id);
    const messages = await records.appendMessages(storage, WS, conversation.id, count);
    const page = (query: { before?: Message; limit: number }) =>
      storage.messages.page({ workspaceId: WS }, conversation.id, { before: query.before?.id, limit: query.limit });
    return { records, agent, conversation, messages, page };
  }

  /** Pages backwards from the newest message; checks every page's size and `hasMore`. */
  async function walk(
    page: (query: { before?: Message; limit: number }) => Promise<MessagePage | null>,
    total: number,
    limit: number,
  ) {
    const seen: Message[] = [];
    const sizes: number[] = [];
    let before: Message | undefined;
    for (let guard = 0; guard <= total; guard += 1) {
      const result = await page({ before, limit });
      expect(result, `page ${guard} with limit ${limit}`).not.toBeNull();
      const { messages, hasMore } = result!;
      const remaining = total - seen.length;
      expect(messages.length, `size of page ${guard} with limit ${limit}`).toBe(Math.min(limit, remaining));
      expect(hasMore, `hasMore of page ${guard} with limit ${limit}`).toBe(remaining > limit);
      seen.unshift(...messages);
      sizes.push(messages.length);
      if (!hasMore) return { seen, sizes };
      before = messages[0];
    }
    throw new Error(`History walk with limit ${limit} did not end after ${total + 1} pages.`);
  }

  contractGroup(t, 'message pages', open, skip, (test) => {
    test('exactly one message: one page without more; before it, an empty page', async (storage) => {
      const { messages, page } = await history(storage, 1);
      expect(await page({ limit: 1 })).toEqual({ messages, hasMore: false });
      expect(await page({ limit: 50 })).toEqual({ messages, hasMore: false });
      expect(await page({ before: messages[0], limit: 1 })).toEqual({ messages: [], hasMore: false });
    });

    test('a history of exactly a multiple of the limit: hasMore is true until the oldest page, then false', async (storage) => {
      const { messages, page } = await history(storage, 6);
      expect(await page({ limit: 3 })).toEqual({ messages: messages.slice(3), hasMore: true });
      expect(await page({ before: messages[3], limit: 3 })).toEqual({ messages: messages.slice(0, 3), hasMore: false });
      expect(await page({ limit: 6 })).toEqual({ messages, hasMore: false });
      expect(await page({ limit: 2 })).toEqual({ messages: messages.slice(4), hasMore: true });
      expect(await page({ before: messages[4], limit: 2 })).toEqual({ messages: messages.slice(2, 4), hasMore: true });
      expect(await page({ before: messages[2], limit: 2 })).toEqual({ messages: messages.slice(0, 2), hasMore: false });
    });

    test('one more than a multiple of the limit leaves a last page of one message', async (storage) => {
      const { messages, page } = await history(storage, 7);
      expect(await page({ limit: 3 })).toEqual({ messages: messages.slice(4), hasMore: true });
      expect(await page({ before: messages[4], limit: 3 })).toEqual({ messages: messages.slice(1, 4), hasMore: true });
      expect(await page({ before: messages[1], limit: 3 })).toEqual({ messages: messages.slice(0, 1), hasMore: false });
    });

    test('before the oldest message is an empty page; before the newest is every older message', async (storage) => {
      const { messages, page } = await history(storage, 5);
      expect(await page({ before: messages[0], limit: 10 })).toEqual({ messages: [], hasMore: false });
      expect(await page({ before: messages[4], limit: 10 })).toEqual({
        messages: messages.slice(0, 4),
        hasMore: false,
      });
      expect(await page({ before: messages[4], limit: 4 })).toEqual({ messages: messages.slice(0, 4), hasMore: false });
      expect(await page({ before: messages[4], limit: 3 })).toEqual({ messages: messages.slice(1, 4), hasMore: true });
    });

    test('walking every page with `before` reproduces the whole history in order, without gaps or duplicates', async (storage) => {
      const { messages, page } = await history(storage, 23);
      for (const limit of [1, 2, 3, 4, 5, 7, 10, 11, 22, 23, 24, 100]) {
        const { seen, sizes } = await walk(page, messages.length, limit);
        expect(ids(seen), `walk with limit ${limit}`).toEqual(ids(messages));
        expect(sizes.length, `pages with limit ${limit}`).toBe(Math.ceil(messages.length / limit));
      }
    });

    test('`before` naming a message of another conversation is null', async (storage) => {
      const { records, agent, messages, page } = await history(storage, 3);
      const other = await records.insertConversation(storage, WS, agent.id);
      const [foreign] = await records.appendMessages(storage, WS, other.id, 1);
      expect(await page({ before: foreign, limit: 10 })).toBeNull();
      expect(
        await storage.messages.page({ workspaceId: WS }, other.id, { before: messages[2]!.id, limit: 10 }),
      ).toBeNull();
    });

    test('`after`: the `limit` oldest messages after the cursor, oldest first; hasMore while newer ones remain', async (storage) => {
      const { conversation, messages } = await history(storage, 7);
      const after = (message: Message, limit: number) =>
        storage.messages.page({ workspaceId: WS }, conversation.id, { after: message.id, limit });
      expect(await after(messages[0]!, 3)).toEqual({ messages: messages.slice(1, 4), hasMore: true });
      expect(await after(messages[3]!, 3)).toEqual({ messages: messages.slice(4, 7), hasMore: false });
      expect(await after(messages[4]!, 3)).toEqual({ messages: messages.slice(5), hasMore: false });
      expect(await after(messages[6]!, 3)).toEqual({ messages: [], hasMore: false });
      const seen: Message[] = [];
      let cursor = messages[0]!;
      for (let guard = 0; guard < 10; guard += 1) {
        const page = await after(cursor, 2);
        seen.push(...page!.messages);
        if (!page!.hasMore) break;
        cursor = page!.messages.at(-1)!;
      }
      expect(ids(seen)).toEqual(ids(messages.slice(1)));
    });

    test('`after` naming a message of another conversation, or a forged id, is null', async (storage) => {
      const { records, agent, conversation, messages } = await history(storage, 3);
      const other = await records.insertConversation(storage, WS, agent.id);
      const [foreign] = await records.appendMessages(storage, WS, other.id, 1);
      expect(
        await storage.messages.page({ workspaceId: WS }, conversation.id, { after: foreign!.id, limit: 10 }),
      ).toBeNull();
      for (const forged of [records.id('msg'), 'not-a-message-id', `${messages[1]!.id}0`]) {
        expect(
          await storage.messages.page({ workspaceId: WS }, conversation.id, { after: forged, limit: 10 }),
          `after '${forged}'`,
        ).toBeNull();
      }
    });

    test('a forged or unknown `before` is null, also when it sorts between real ids', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      await records.appendMessages(storage, WS, conversation.id, 2);
      const between = records.id('msg');
      const [newest] = await records.appendMessages(storage, WS, conversation.id, 1);
      const forged = [
        between,
        records.id('msg'),
        'msg_00000000000000000000000000',
        'not-a-message-id',
        '',
        conversation.id,
        `${newest!.id}0`,
        newest!.id.slice(0, -1),
      ];
      for (const before of forged) {
        expect(
          await storage.messages.page({ workspaceId: WS }, conversation.id, { before, limit: 10 }),
          `before '${before}'`,
        ).toBeNull();
      }
    });

    test("with requireConversation, an unknown conversation (or another workspace's) is null in every direction", async (storage) => {
      const { records, agent, conversation, messages } = await history(storage, 3);
      const empty = await records.insertConversation(storage, WS, agent.id);
      const required = (workspaceId: string, conversationId: string, query: { before?: string; after?: string }) =>
        storage.messages.page({ workspaceId }, conversationId, { ...query, limit: 2, requireConversation: true });
      for (const query of [{}, { before: messages[2]!.id }, { after: messages[0]!.id }]) {
        expect(await required(WS, records.id('conv'), query), JSON.stringify(query)).toBeNull();
        expect(await required(OTHER_WS, conversation.id, query), JSON.stringify(query)).toBeNull();
        expect(await required(WS, conversation.id, query)).toEqual(
          await storage.messages.page({ workspaceId: WS }, conversation.id, { ...query, limit: 2 }),
        );
      }
      expect(await required(WS, conversation.id, {})).toEqual({ messages: messages.slice(1), hasMore: true });
      expect(await required(WS, empty.id, {})).toEqual({ messages: [], hasMore: false });
      expect(await required(WS, conversation.id, { before: records.id('msg') })).toBeNull();
    });
  });
}
