/** @module Storage contract: `update` is a compare-and-set, so concurrent changes never undo each other. */
import type { Storage } from '../../ports/storage.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { logOf } from './event-recording.js';
import { Records, WS } from './fixtures.js';

/**
 * Writers racing for one record. An adapter that retries a lost compare-and-set a bounded number
 * of times must allow at least this many tries: each lost try means another writer won.
 */
const CONCURRENT = 20;
const keys = Array.from({ length: CONCURRENT }, (_, index) => `k${index}`);

/** @internal Registers the concurrency tests of `update` on every store that has one. */
export function compareAndSetTests(t: ContractTestApi, open: () => Promise<OpenedFixture<Storage>>, skip: readonly string[]): void {
  const { expect } = t;
  contractGroup(t, 'compare-and-set', open, skip, (test) => {
    test(`agents: ${CONCURRENT} concurrent updates each adding its own field all survive, each with its event`, async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS, { configuration: { kept: true } });
      await Promise.all(
        keys.map((key) =>
          storage.agents.update(WS, agent.id, (current) => {
            const record = { ...current, configuration: { ...current.configuration, [key]: key } };
            return { record, event: records.event(WS, 'agent.updated', record) };
          }),
        ),
      );
      const stored = await storage.agents.get(WS, agent.id);
      expect(stored?.configuration).toEqual({ kept: true, ...Object.fromEntries(keys.map((key) => [key, key])) });
      const updates = (await logOf(storage)).filter((event) => event.type === 'agent.updated');
      expect(updates).toHaveLength(CONCURRENT);
      // The last event recorded describes the stored agent: events follow the writes' order.
      expect(updates.at(-1)?.data).toEqual(stored);
    });

    test(`conversations: ${CONCURRENT} concurrent updates each adding its own field all survive`, async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { metadata: {} });
      await Promise.all(
        keys.map((key) => storage.conversations.update(WS, conversation.id, (current) => ({ record: { ...current, metadata: { ...current.metadata, [key]: key } } }))),
      );
      expect((await storage.conversations.get(WS, conversation.id))?.metadata).toEqual(Object.fromEntries(keys.map((key) => [key, key])));
    });

    test(`webhook endpoints: ${CONCURRENT} concurrent updates all survive, and a disable is never undone by a concurrent edit`, async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS, { url: 'https://hooks.example.com/h' });
      // CONCURRENT writers in all: one disables, the others each add a path segment.
      const segments = keys.slice(1);
      await Promise.all([
        ...segments.map((key) => storage.webhookEndpoints.update(WS, endpoint.id, (current) => ({ record: { ...current, url: `${current.url}/${key}` } }))),
        storage.webhookEndpoints.update(WS, endpoint.id, (current) => ({ record: { ...current, enabled: false, disabledReason: 'gone' } })),
      ]);
      const stored = (await storage.webhookEndpoints.get(WS, endpoint.id))!;
      expect(stored.enabled).toBe(false);
      expect(stored.disabledReason).toBe('gone');
      expect(stored.url.split('/').slice(4).sort()).toEqual([...segments].sort());
    });

    test('concurrent completes of one conversation: exactly one sees it active and records the event', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          storage.conversations.update(WS, conversation.id, (current) => {
            if (current.status !== 'active') return null;
            const record = { ...current, status: 'completed' as const, metadata: { by: index } };
            return { record, event: records.event(WS, 'conversation.completed', record) };
          }),
        ),
      );
      const stored = await storage.conversations.get(WS, conversation.id);
      expect(stored?.status).toBe('completed');
      // Every caller resolves with the conversation as stored: the winner's change.
      for (const result of results) expect(result).toEqual(stored);
      const completions = (await logOf(storage)).filter((event) => event.type === 'conversation.completed');
      expect(completions).toHaveLength(1);
      expect(completions[0]?.data).toEqual(stored);
      expect(await storage.conversations.list(WS, { offset: 0, limit: 10, status: 'completed' })).toEqual({ items: [stored], total: 1 });
    });

    test('a message appended concurrently with the completion lands before it or not at all', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const messages = Array.from({ length: 10 }, () => records.message(conversation.id));
      const outcomes = await Promise.all([
        ...messages.slice(0, 5).map((message) => storage.messages.append(WS, message, records.sent(WS, message))),
        storage.conversations.update(WS, conversation.id, (current) => {
          const record = { ...current, status: 'completed' as const };
          return { record, event: records.event(WS, 'conversation.completed', record) };
        }),
        ...messages.slice(5).map((message) => storage.messages.append(WS, message, records.sent(WS, message))),
      ]);
      const appended = outcomes.filter((outcome) => outcome === 'appended').length;
      const stored = (await storage.messages.page(WS, conversation.id, { limit: 100 }))!.messages;
      expect(stored).toHaveLength(appended);
      const types = (await logOf(storage)).map((event) => event.type);
      // Commit order: every recorded message.sent comes before the completion.
      expect(types.lastIndexOf('message.sent') < types.indexOf('conversation.completed')).toBe(true);
      expect(types.filter((type) => type === 'message.sent')).toHaveLength(appended);
    });
  });
}
