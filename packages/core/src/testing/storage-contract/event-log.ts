/** @module Storage contract: reading the event log — commit order, paging, filters, retention, isolation. */
import type { Storage } from '../../ports/storage.js';
import type { DomainEvent } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import type { StorageFactoryOptions } from './factory.js';
import { ids, mutateResult, OTHER_WS, Records, WS } from './fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retention the retention tests ask the factory for, in ms. */
const SHORT_RETENTION_MS = 400;

/** @internal Registers the tests of `storage.events`. */
export function eventLogTests(
  t: ContractTestApi,
  openWith: (options: StorageFactoryOptions) => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(
    t,
    'event log',
    () => openWith({}),
    skip,
    (test) => {
      test('an empty log lists nothing; get of an unknown id is null', async (storage) => {
        const records = new Records();
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10 })).toEqual({ events: [], hasMore: false });
        expect(
          await storage.events.get({ workspaceId: WS }, records.event(WS, 'agent.created', records.agent()).id),
        ).toBeNull();
      });

      test('lists in commit order and pages with after and limit', async (storage) => {
        const records = new Records();
        const events = await records.insertAgentsWithEvents(storage, WS, 7);
        expect(await storage.events.list({ workspaceId: WS }, { limit: 100 })).toEqual({ events, hasMore: false });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 3 })).toEqual({
          events: events.slice(0, 3),
          hasMore: true,
        });
        expect(await storage.events.list({ workspaceId: WS }, { after: events[2]!.id, limit: 3 })).toEqual({
          events: events.slice(3, 6),
          hasMore: true,
        });
        expect(await storage.events.list({ workspaceId: WS }, { after: events[5]!.id, limit: 3 })).toEqual({
          events: events.slice(6),
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { after: events[3]!.id, limit: 3 })).toEqual({
          events: events.slice(4),
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { after: events[6]!.id, limit: 3 })).toEqual({
          events: [],
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 7 })).toEqual({ events, hasMore: false });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 1 })).toEqual({
          events: events.slice(0, 1),
          hasMore: true,
        });
      });

      test('commit order, not id order: an event with an older id recorded later is listed later, after its cursor', async (storage) => {
        const records = new Records();
        const early = records.agent();
        const late = records.agent();
        const earlyEvent = records.event(WS, 'agent.created', early);
        const lateEvent = records.event(WS, 'agent.created', late);
        await storage.agents.insert({ workspaceId: WS }, late, { event: lateEvent });
        // A reader that has seen everything so far...
        const seen = await storage.events.list({ workspaceId: WS }, { limit: 10 });
        expect(seen).toEqual({ events: [lateEvent], hasMore: false });
        // ...then a write that committed late, with an older event id...
        await storage.agents.insert({ workspaceId: WS }, early, { event: earlyEvent });
        // ...still finds it after its cursor.
        expect(await storage.events.list({ workspaceId: WS }, { after: lateEvent.id, limit: 10 })).toEqual({
          events: [earlyEvent],
          hasMore: false,
        });
        expect(ids((await storage.events.list({ workspaceId: WS }, { limit: 10 }))!.events)).toEqual([
          lateEvent.id,
          earlyEvent.id,
        ]);
      });

      test('get returns the recorded event of any type', async (storage) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const conversation = records.conversation(agent.id);
        const started = records.event(WS, 'conversation.started', conversation);
        await storage.conversations.insert({ workspaceId: WS }, conversation, { event: started });
        const message = records.message(conversation.id, { metadata: { nested: { deep: [1, 2, { x: null }] } } });
        const sent = records.sent(WS, message);
        await storage.messages.append({ workspaceId: WS }, message, { event: sent });
        expect(await storage.events.get({ workspaceId: WS }, started.id)).toEqual(started);
        expect(await storage.events.get({ workspaceId: WS }, sent.id)).toEqual(sent);
        // As the services pass it: the event's data is the appended message object itself.
        const reply = records.message(conversation.id, { role: 'assistant', content: 'Same object' });
        const received = { ...records.sent(WS, reply), data: reply };
        await storage.messages.append({ workspaceId: WS }, reply, { event: received });
        expect(await storage.events.get({ workspaceId: WS }, received.id)).toEqual({ ...received, data: { ...reply } });
      });

      test('type filters the list and its paging; hasMore counts only matching events', async (storage) => {
        const records = new Records();
        const agent = await records.insertAgent(storage, WS);
        const conversation = await records.insertConversation(storage, WS, agent.id);
        const sent: DomainEvent[] = [];
        const received: DomainEvent[] = [];
        for (let index = 0; index < 6; index += 1) {
          const message = records.message(conversation.id, { role: index % 3 === 0 ? 'assistant' : 'user' });
          const event = records.sent(WS, message);
          await storage.messages.append({ workspaceId: WS }, message, { event: event });
          (event.type === 'message.sent' ? sent : received).push(event);
        }
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'message.sent' })).toEqual({
          events: sent,
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'message.received' })).toEqual({
          events: received,
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 2, type: 'message.sent' })).toEqual({
          events: sent.slice(0, 2),
          hasMore: true,
        });
        expect(
          await storage.events.list({ workspaceId: WS }, { after: sent[1]!.id, limit: 2, type: 'message.sent' }),
        ).toEqual({ events: sent.slice(2, 4), hasMore: false });
        // `after` may name an event of another type: the page starts after it in commit order.
        expect(
          await storage.events.list({ workspaceId: WS }, { after: received[0]!.id, limit: 10, type: 'message.sent' }),
        ).toEqual({ events: sent, hasMore: false });
        expect(
          await storage.events.list(
            { workspaceId: WS },
            { after: received[1]!.id, limit: 1, type: 'message.received' },
          ),
        ).toEqual({ events: [], hasMore: false });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 1, type: 'message.received' })).toEqual({
          events: received.slice(0, 1),
          hasMore: true,
        });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'agent.deleted' })).toEqual({
          events: [],
          hasMore: false,
        });
      });

      test('after naming no event of this workspace is null', async (storage) => {
        const records = new Records();
        const [mine] = await records.insertAgentsWithEvents(storage, WS, 1);
        const [theirs] = await records.insertAgentsWithEvents(storage, OTHER_WS, 1);
        const unknown = records.event(WS, 'agent.created', records.agent()).id;
        expect(await storage.events.list({ workspaceId: WS }, { after: unknown, limit: 10 })).toBeNull();
        expect(
          await storage.events.list({ workspaceId: WS }, { after: unknown, limit: 10, type: 'agent.created' }),
        ).toBeNull();
        expect(await storage.events.list({ workspaceId: WS }, { after: '', limit: 10 })).toBeNull();
        expect(await storage.events.list({ workspaceId: WS }, { after: theirs!.id, limit: 10 })).toBeNull();
        expect(await storage.events.list({ workspaceId: OTHER_WS }, { after: mine!.id, limit: 10 })).toBeNull();
      });

      test('workspaces never see each other’s events', async (storage) => {
        const records = new Records();
        const mine = await records.insertAgentsWithEvents(storage, WS, 3);
        const theirs = await records.insertAgentsWithEvents(storage, OTHER_WS, 2);
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10 })).toEqual({ events: mine, hasMore: false });
        expect(await storage.events.list({ workspaceId: OTHER_WS }, { limit: 10 })).toEqual({
          events: theirs,
          hasMore: false,
        });
        expect(await storage.events.get({ workspaceId: OTHER_WS }, mine[0]!.id)).toBeNull();
        expect(await storage.events.get({ workspaceId: WS }, theirs[0]!.id)).toBeNull();
        expect(await storage.events.list({ workspaceId: 'ws_contract_empty' }, { limit: 10 })).toEqual({
          events: [],
          hasMore: false,
        });
      });

      test('events handed out do not alias the log: mutating an input or a result changes nothing recorded, and a later write changes no page read before it', async (storage) => {
        const records = new Records();
        const agent = records.agent();
        const event = records.event(WS, 'agent.created', agent);
        const expected = structuredClone(event);
        await storage.agents.insert({ workspaceId: WS }, agent, { event: event });
        (event.data as typeof agent).name = 'mutated input';
        const got = (await storage.events.get({ workspaceId: WS }, expected.id))!;
        mutateResult(() => ((got.data as typeof agent).configuration['tools'] = 'mutated result'));
        const listed = (await storage.events.list({ workspaceId: WS }, { limit: 1 }))!.events[0]!;
        mutateResult(() => (listed.type = 'agent.deleted'));
        expect(await storage.events.get({ workspaceId: WS }, expected.id)).toEqual(expected);
        const page = (await storage.events.list({ workspaceId: WS }, { limit: 10 }))!;
        expect(page).toEqual({ events: [expected], hasMore: false });

        const read = await storage.events.get({ workspaceId: WS }, expected.id);
        await storage.agents.update({ workspaceId: WS }, agent.id, {
          set: { name: 'Renamed' },
          event: records.draft(WS, 'agent.updated'),
        });
        expect(page).toEqual({ events: [expected], hasMore: false });
        expect(read).toEqual(expected);
      });
    },
  );

  contractGroup(
    t,
    'event retention',
    () => openWith({ eventRetentionMs: SHORT_RETENTION_MS }),
    skip,
    (test) => {
      test('events older than eventRetentionMs are neither read nor listed, and their cursors are null', async (storage) => {
        const records = new Records();
        const old = await records.insertAgentsWithEvents(storage, WS, 3);
        await sleep(SHORT_RETENTION_MS + 200);
        const fresh = await records.insertAgentsWithEvents(storage, WS, 2);
        expect(await storage.events.get({ workspaceId: WS }, old[0]!.id)).toBeNull();
        expect(await storage.events.get({ workspaceId: WS }, fresh[0]!.id)).toEqual(fresh[0]);
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10 })).toEqual({
          events: fresh,
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { limit: 10, type: 'agent.created' })).toEqual({
          events: fresh,
          hasMore: false,
        });
        expect(await storage.events.list({ workspaceId: WS }, { after: old[2]!.id, limit: 10 })).toBeNull();
        expect(await storage.events.list({ workspaceId: WS }, { after: fresh[0]!.id, limit: 10 })).toEqual({
          events: fresh.slice(1),
          hasMore: false,
        });
      });
    },
  );
}
