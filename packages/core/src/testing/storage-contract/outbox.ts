/** @module Storage contract: the outbox — batches per workspace in commit order, acks, leases, waits. */
import type { OutboxBatch, Storage } from '../../ports/storage.js';
import type { DomainEvent } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { OTHER_WS, Records, WS } from './fixtures.js';
import type { StorageFactoryOptions } from './factory.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lease the lease tests ask the factory for, in ms. */
const SHORT_LEASE_MS = 400;
/** Long enough for any backend to answer; a take that should wake earlier must not need it. */
const PATIENT_MS = 10_000;

/** `promise`, or `'still waiting'` when it has not settled after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** @internal Registers the tests of `storage.outbox`. */
export function outboxTests(
  t: ContractTestApi,
  openWith: (options: StorageFactoryOptions) => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(
    t,
    'outbox',
    () => openWith({}),
    skip,
    (test) => {
      test('a fresh storage has nothing to take: take resolves null after waitMs', async (storage) => {
        expect(await storage.outbox.take(10, 100)).toBeNull();
      });

      test('take hands out one workspace’s oldest events in commit order, at most max; ack removes them', async (storage) => {
        const records = new Records();
        const events = await records.insertAgentsWithEvents(storage, WS, 5);
        const first = (await storage.outbox.take(3, 1000))!;
        expect(first.workspaceId).toBe(WS);
        expect(first.events).toEqual(events.slice(0, 3));
        await storage.outbox.ack(first);
        const second = (await storage.outbox.take(3, 1000))!;
        expect(second.events).toEqual(events.slice(3));
        await storage.outbox.ack(second);
        expect(await storage.outbox.take(3, 100)).toBeNull();
      });

      test('a batch holds events of one workspace only; each workspace comes out whole and in order', async (storage) => {
        const records = new Records();
        const mine: DomainEvent[] = [];
        const theirs: DomainEvent[] = [];
        for (let index = 0; index < 4; index += 1) {
          mine.push(...(await records.insertAgentsWithEvents(storage, WS, 1)));
          theirs.push(...(await records.insertAgentsWithEvents(storage, OTHER_WS, 1)));
        }
        const taken: Record<string, DomainEvent[]> = { [WS]: [], [OTHER_WS]: [] };
        for (let guard = 0; guard < 20; guard += 1) {
          const batch = await storage.outbox.take(3, 100);
          if (!batch) break;
          for (const event of batch.events) expect(event.workspaceId).toBe(batch.workspaceId);
          taken[batch.workspaceId]!.push(...batch.events);
          await storage.outbox.ack(batch);
        }
        expect(taken[WS]).toEqual(mine);
        expect(taken[OTHER_WS]).toEqual(theirs);
      });

      test('an event recorded while a batch is held is handed out after it', async (storage) => {
        const records = new Records();
        const [first] = await records.insertAgentsWithEvents(storage, WS, 1);
        const batch = (await storage.outbox.take(10, 1000))!;
        const [second] = await records.insertAgentsWithEvents(storage, WS, 1);
        await storage.outbox.ack(batch);
        expect(batch.events).toEqual([first]);
        const next = (await storage.outbox.take(10, 1000))!;
        expect(next.events).toEqual([second]);
      });

      test('take waits for an event recorded after it started, and wakes for it', async (storage) => {
        const records = new Records();
        const waiting = storage.outbox.take(10, PATIENT_MS);
        await sleep(100);
        const [event] = await records.insertAgentsWithEvents(storage, WS, 1);
        const batch = await within(waiting, PATIENT_MS / 2);
        expect(batch === 'still waiting' ? batch : batch?.events).toEqual([event]);
      });

      test('concurrent takers never hold the same workspace’s events at once', async (storage) => {
        const records = new Records();
        await records.insertAgentsWithEvents(storage, WS, 6);
        const batches = await Promise.all(Array.from({ length: 5 }, () => storage.outbox.take(2, 200)));
        const held = batches.filter((batch): batch is OutboxBatch => batch !== null);
        expect(held).toHaveLength(1);
        // Another workspace is free for another taker meanwhile.
        const [other] = await records.insertAgentsWithEvents(storage, OTHER_WS, 1);
        const parallel = (await storage.outbox.take(10, 1000))!;
        expect(parallel.workspaceId).toBe(OTHER_WS);
        expect(parallel.events).toEqual([other]);
        await storage.outbox.ack(held[0]!);
        await storage.outbox.ack(parallel);
        const next = (await storage.outbox.take(10, 1000))!;
        expect(next.workspaceId).toBe(WS);
        expect(next.events).toHaveLength(4);
      });

      test('each event comes out with the trace context its write was made in (scope.traceContext), by event id', async (storage) => {
        const records = new Records();
        const trace = (n: number) =>
          `00-${'4bf92f3577b34da6a3ce929d0e0e47'}${String(n).padStart(2, '0')}-00f067aa0ba902b7-01`;
        const traced = (n: number) => ({ workspaceId: WS, traceContext: trace(n) });
        const agent = records.agent();
        const created = records.event(WS, 'agent.created', agent);
        await storage.agents.insert(traced(1), agent, { event: created });
        const conversation = records.conversation(agent.id);
        const started = records.event(WS, 'conversation.started', conversation);
        await storage.conversations.insert({ workspaceId: WS }, conversation, { event: started });
        // Appends made together (a backend may write them as one batch) keep each its own context.
        const messages = [records.message(conversation.id), records.message(conversation.id, { role: 'assistant' })];
        const sent = messages.map((message) => records.sent(WS, message));
        const withState = `${trace(3)} congo=t61rcWkgMzE,rojo=00f067aa0ba902b7`;
        await Promise.all([
          storage.messages.append(traced(2), messages[0]!, { event: sent[0]! }),
          storage.messages.append({ workspaceId: WS, traceContext: withState }, messages[1]!, { event: sent[1]! }),
        ]);
        const completed = records.draft(WS, 'conversation.completed');
        await storage.conversations.update(traced(4), conversation.id, {
          set: { status: 'completed' },
          event: completed,
        });
        const deleted = records.draft(WS, 'agent.deleted');
        await storage.agents.delete(traced(5), agent.id, { event: deleted });
        const taken: OutboxBatch[] = [];
        for (let batch = await storage.outbox.take(10, 1000); batch; batch = await storage.outbox.take(10, 100)) {
          taken.push(batch);
          await storage.outbox.ack(batch);
        }
        const contexts = Object.assign({}, ...taken.map((batch) => batch.traceContexts ?? {}));
        expect(taken.flatMap((batch) => batch.events.map((event) => event.id))).toHaveLength(6);
        expect(contexts).toEqual({
          [created.id]: trace(1),
          [sent[0]!.id]: trace(2),
          [sent[1]!.id]: withState,
          [completed.id]: trace(4),
          [deleted.id]: trace(5),
        });
      });
    },
  );

  contractGroup(
    t,
    'outbox leases',
    () => openWith({ outboxLeaseMs: SHORT_LEASE_MS }),
    skip,
    (test) => {
      test('a batch not acknowledged within outboxLeaseMs is handed out again, whole and in order', async (storage) => {
        const records = new Records();
        const events = await records.insertAgentsWithEvents(storage, WS, 3);
        const lost = (await storage.outbox.take(2, 1000))!;
        expect(lost.events).toEqual(events.slice(0, 2));
        expect(await storage.outbox.take(2, 50)).toBeNull();
        const again = await within(storage.outbox.take(2, PATIENT_MS), PATIENT_MS / 2);
        expect(again === 'still waiting' ? again : again?.events).toEqual(events.slice(0, 2));
        // The late ack of the lost lease does not release the new holder's lease...
        await storage.outbox.ack(lost);
        const [later] = await records.insertAgentsWithEvents(storage, WS, 1);
        expect(await storage.outbox.take(10, 50)).toBeNull();
        // ...and once the holder acknowledges, only the rest remains, in order.
        await storage.outbox.ack(again as OutboxBatch);
        expect((await storage.outbox.take(10, 1000))?.events).toEqual([events[2], later]);
      });
    },
  );
}
