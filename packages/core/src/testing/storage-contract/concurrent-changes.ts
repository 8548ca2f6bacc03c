/**
 * @module Storage contract: `update` is a declarative change merged in the store's atomic step,
 * so any number of concurrent changes of one record all apply and none undoes another.
 */
import type { Change, Storage, WriteResult } from '../../ports/storage.js';
import { recordVersion } from '../../record-version.js';
import type { Agent, Conversation, WebhookEndpointRecord } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { logOf } from './event-recording.js';
import { Records, WS } from './fixtures.js';

/** Writers racing for one record: far more than any retry budget a compare-and-set loop would have. */
const CONCURRENT = 200;

const at = (index: number) => new Date(Date.parse('2026-04-01T00:00:00.000Z') + index).toISOString();

/** Change `index` sets one field (cycling through the record's fields) to a value no other change uses. */
const agentChanges = (index: number): Partial<Agent> =>
  [
    { name: `name ${index}` },
    { description: `description ${index}` },
    { systemPrompt: `prompt ${index}` },
    { temperature: index / 1000 },
    { maxTokens: index + 1 },
    { configuration: { index, list: [], empty: {} } },
    { model: `model-${index}` },
  ][index % 7]!;
const conversationChanges = (index: number): Partial<Conversation> =>
  [{ metadata: { index, nested: { list: [index] } } }, { updatedAt: at(index) }, { lastMessageAt: at(index) }][
    index % 3
  ]!;
const endpointChanges = (index: number): Partial<WebhookEndpointRecord> =>
  (<Array<Partial<WebhookEndpointRecord>>>[
    { url: `https://hooks.example.com/${index}` },
    { events: index % 2 === 0 ? ['agent.created'] : ['message.sent', 'agent.deleted'] },
    { secret: `whsec_${index}` },
    { enabled: index % 2 === 0 },
    { previousSecrets: [{ secret: `whsec_old_${index}`, expiresAt: at(index) }] },
    { failingSince: at(index) },
  ])[index % 6]!;

/**
 * Checks `results` of concurrent changes made by `changeOf(index)` on `initial`: every one applied,
 * each with its own version (1 + its place in commit order), and each record as stored after a
 * change is exactly the record after the previous one with that change's fields set — so no
 * change was made on a stale record and no field was lost. Returns the records in commit order.
 */
function checkMerged<T extends object>(
  expect: ContractTestApi['expect'],
  initial: T,
  results: ReadonlyArray<WriteResult<T> | null>,
  changeOf: (index: number) => Partial<T>,
): T[] {
  const applied = results.map((result, index) => {
    expect(result?.outcome, `change ${index}`).toBe('applied');
    return { index, record: result!.record, version: recordVersion(result!.record) };
  });
  applied.sort((a, b) => a.version - b.version);
  expect(applied.map(({ version }) => version)).toEqual(
    Array.from({ length: results.length }, (_, index) => index + 2),
  );
  let previous: T = initial;
  for (const { index, record } of applied) {
    expect(record, `change ${index}`).toEqual({ ...previous, ...changeOf(index) });
    previous = record;
  }
  return applied.map(({ record }) => record);
}

/** @internal Registers the concurrency tests of `update` on every store that has one. */
export function concurrentChangeTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'concurrent changes', open, skip, (test) => {
    test(`agents: ${CONCURRENT} concurrent updates of different fields all apply and every field survives, each with its event`, async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const drafts = Array.from({ length: CONCURRENT }, () => records.draft(WS, 'agent.updated'));
      const results = await Promise.all(
        drafts.map((event, index) =>
          storage.agents.update({ workspaceId: WS }, agent.id, { set: agentChanges(index), event }),
        ),
      );
      const inOrder = checkMerged(expect, agent, results, agentChanges);
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(inOrder.at(-1));
      expect(recordVersion((await storage.agents.get({ workspaceId: WS }, agent.id))!)).toBe(CONCURRENT + 1);
      // Each event describes the agent as its change stored it. (Their order in the log is the
      // store's: on PostgreSQL it follows transaction ids, which concurrent writers of one record
      // may take in another order than they commit.)
      const updates = (await logOf(storage)).filter((event) => event.type === 'agent.updated');
      const byContent = (records: unknown[]) => records.map((record) => JSON.stringify(record)).sort();
      expect(byContent(updates.map((event) => event.data))).toEqual(byContent(inOrder));
    });

    test('appends made together are each decided as if alone: outcomes, messages, events, lastMessageAt and versions', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const open = await Promise.all(
        Array.from({ length: 5 }, () => records.insertConversation(storage, WS, agent.id)),
      );
      const done = await records.insertConversation(storage, WS, agent.id);
      await storage.conversations.update({ workspaceId: WS }, done.id, { set: { status: 'completed' } });
      const unknown = records.conversation(agent.id);
      const targets = [...open, ...open, open[0]!, done, unknown];
      const made = targets.map((conversation, index) =>
        records.message(conversation.id, { createdAt: at(1_000 - index) }),
      );
      const events = made.map((message) => records.sent(WS, message));
      const before = await Promise.all(open.map((c) => storage.conversations.get({ workspaceId: WS }, c.id)));
      const outcomes = await Promise.all(
        made.map((message, i) => storage.messages.append({ workspaceId: WS }, message, { event: events[i]! })),
      );
      expect(outcomes).toEqual([
        ...Array.from({ length: 11 }, () => 'appended'),
        'conversation_completed',
        'conversation_not_found',
      ]);
      for (const [i, conversation] of open.entries()) {
        const mine = made.filter((message) => message.conversationId === conversation.id);
        const page = await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 });
        expect(page?.messages).toEqual([...mine].sort((a, b) => (a.id < b.id ? -1 : 1)));
        const after = (await storage.conversations.get({ workspaceId: WS }, conversation.id))!;
        expect(after.lastMessageAt).toBe(
          mine
            .map((message) => message.createdAt)
            .sort()
            .at(-1),
        );
        expect(recordVersion(after)).toBe(recordVersion(before[i]!) + mine.length);
      }
      const sent = (await logOf(storage)).filter((event) => event.type === 'message.sent');
      expect(sent.map((event) => event.id).sort()).toEqual(
        events
          .slice(0, 11)
          .map((event) => event.id)
          .sort(),
      );
    });

    test(`conversations: ${CONCURRENT} concurrent updates of different fields all apply and every field survives`, async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const results = await Promise.all(
        Array.from({ length: CONCURRENT }, (_, index) =>
          storage.conversations.update({ workspaceId: WS }, conversation.id, { set: conversationChanges(index) }),
        ),
      );
      const inOrder = checkMerged(expect, conversation, results, conversationChanges);
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(inOrder.at(-1));
      expect(
        (
          await storage.conversations.list(
            { workspaceId: WS },
            { offset: 0, limit: 10, userId: 'u1', status: 'active' },
          )
        ).items,
      ).toEqual([inOrder.at(-1)]);
    });

    test(`webhook endpoints: ${CONCURRENT} concurrent updates of different fields all apply and every field survives`, async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS);
      const results = await Promise.all(
        Array.from({ length: CONCURRENT }, (_, index) =>
          storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, { set: endpointChanges(index) }),
        ),
      );
      const inOrder = checkMerged(expect, endpoint, results, endpointChanges);
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toEqual(inOrder.at(-1));
    });

    test('a disable conditioned on enabled applies once, and concurrent edits of other fields never undo it', async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS, { url: 'https://hooks.example.com/h' });
      const disable: Change<WebhookEndpointRecord> = {
        set: { enabled: false, disabledReason: 'gone' },
        where: [{ field: 'enabled', equals: true }],
      };
      const results = await Promise.all([
        ...Array.from({ length: 20 }, (_, index) =>
          storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, {
            set: { url: `https://hooks.example.com/${index}` },
          }),
        ),
        ...Array.from({ length: 5 }, () => storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, disable)),
      ]);
      expect(results.slice(20).filter((result) => result?.outcome === 'applied')).toHaveLength(1);
      const stored = (await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id))!;
      expect([stored.enabled, stored.disabledReason]).toEqual([false, 'gone']);
      expect(recordVersion(stored)).toBe(1 + 20 + 1);
    });

    test('of concurrent changes with the same ifVersion exactly one applies; the others are unmet and write nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          storage.agents.update({ workspaceId: WS }, agent.id, {
            set: { name: `Writer ${index}` },
            ifVersion: [1],
            event: records.draft(WS, 'agent.updated'),
          }),
        ),
      );
      const winners = results.filter((result) => result?.outcome === 'applied');
      expect(winners).toHaveLength(1);
      const stored = (await storage.agents.get({ workspaceId: WS }, agent.id))!;
      expect(stored).toEqual(winners[0]!.record);
      expect(recordVersion(stored)).toBe(2);
      expect((await logOf(storage)).filter((event) => event.type === 'agent.updated')).toHaveLength(1);
    });

    test('versions: 1 on insert, +1 per applied change and per message appended, kept by unmet and keepVersion changes', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const endpoint = await records.insertEndpoint(storage, WS);
      const version = async () => [
        recordVersion((await storage.agents.get({ workspaceId: WS }, agent.id))!),
        recordVersion((await storage.conversations.get({ workspaceId: WS }, conversation.id))!),
        recordVersion((await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id))!),
      ];
      expect(await version()).toEqual([1, 1, 1]);
      expect(recordVersion((await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items[0]!)).toBe(
        1,
      );
      await storage.agents.update({ workspaceId: WS }, agent.id, { set: { name: 'Two' } });
      await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { name: 'Never' },
        where: [{ field: 'status', equals: 'inactive' }],
      });
      await records.appendMessages(storage, WS, conversation.id, 2);
      await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, {
        set: { failingSince: at(1) },
        keepVersion: true,
      });
      expect(await version()).toEqual([2, 3, 1]);
      expect((await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id))!.failingSince).toBe(at(1));
      expect(
        recordVersion((await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items[0]!),
      ).toBe(3);
    });

    test('concurrent completes of one conversation: exactly one applies and records the event', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          storage.conversations.update({ workspaceId: WS }, conversation.id, {
            set: { status: 'completed', metadata: { by: index } },
            where: [{ field: 'status', equals: 'active' }],
            event: records.draft(WS, 'conversation.completed'),
          }),
        ),
      );
      const stored = await storage.conversations.get({ workspaceId: WS }, conversation.id);
      expect(stored?.status).toBe('completed');
      const winners = results.filter((result) => result?.outcome === 'applied');
      expect(winners).toHaveLength(1);
      // Every caller resolves with the conversation as stored: the winner's change.
      for (const result of results) expect(result?.record).toEqual(stored);
      const completions = (await logOf(storage)).filter((event) => event.type === 'conversation.completed');
      expect(completions).toHaveLength(1);
      expect(completions[0]?.data).toEqual(stored);
      expect(
        await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10, status: 'completed' }),
      ).toEqual({ items: [stored], total: 1 });
    });

    test('a message appended concurrently with the completion lands before it or not at all', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const messages = Array.from({ length: 10 }, () => records.message(conversation.id));
      const complete: Change<Conversation> = {
        set: { status: 'completed' },
        where: [{ field: 'status', equals: 'active' }],
        event: records.draft(WS, 'conversation.completed'),
      };
      const outcomes = await Promise.all([
        ...messages
          .slice(0, 5)
          .map((message) =>
            storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) }),
          ),
        storage.conversations.update({ workspaceId: WS }, conversation.id, complete),
        ...messages
          .slice(5)
          .map((message) =>
            storage.messages.append({ workspaceId: WS }, message, { event: records.sent(WS, message) }),
          ),
      ]);
      const appended = outcomes.filter((outcome) => outcome === 'appended').length;
      const stored = (await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 100 }))!.messages;
      expect(stored).toHaveLength(appended);
      const types = (await logOf(storage)).map((event) => event.type);
      // Commit order: every recorded message.sent comes before the completion.
      expect(types.lastIndexOf('message.sent') < types.indexOf('conversation.completed')).toBe(true);
      expect(types.filter((type) => type === 'message.sent')).toHaveLength(appended);
    });
  });
}
