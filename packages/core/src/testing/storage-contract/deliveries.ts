/** @module Storage contract: each webhook endpoint's deliveries log. */
import type { Storage } from '../../ports/storage.js';
import type { DeliveryAttempt, DomainEvent } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { ids, mutateResult, OTHER_WS, Records, WS } from './fixtures.js';
import type { StorageFactoryOptions } from './factory.js';

const SHORT_RETENTION_MS = 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An endpoint, two events, and attempts recorded for them (oldest first). */
async function world(storage: Storage) {
  const records = new Records();
  const endpoint = await records.insertEndpoint(storage, WS);
  const agent = records.agent();
  const created = records.event(WS, 'agent.created', agent);
  const updated = records.event(WS, 'agent.updated', agent);
  const attempt = (event: DomainEvent, overrides: Partial<DeliveryAttempt> = {}) =>
    records.attempt(endpoint.id, event, overrides);
  return { records, endpoint, created, updated, attempt };
}

/** @internal Registers the tests of `storage.deliveries`. */
export function deliveryTests(
  t: ContractTestApi,
  openWith: (options: StorageFactoryOptions) => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(
    t,
    'deliveries',
    () => openWith({}),
    skip,
    (test) => {
      test('record then get returns an equal attempt; unknown ids and endpoints are null', async (storage) => {
        const { records, endpoint, created, attempt } = await world(storage);
        const failed = attempt(created, {
          status: null,
          error: 'connection refused',
          responseBody: null,
          trigger: 'recover',
          attempt: 3,
        });
        await storage.deliveries.record({ workspaceId: WS }, failed);
        expect(await storage.deliveries.get({ workspaceId: WS }, endpoint.id, failed.id)).toEqual(failed);
        expect(await storage.deliveries.get({ workspaceId: WS }, endpoint.id, records.id('dlv'))).toBeNull();
        expect(await storage.deliveries.get({ workspaceId: WS }, records.id('wh'), failed.id)).toBeNull();
      });

      test('list is newest first and pages with before and limit; before naming no attempt is null', async (storage) => {
        const { records, endpoint, created, updated, attempt } = await world(storage);
        const made = [attempt(created), attempt(updated), attempt(created), attempt(updated), attempt(created)];
        for (const index of [2, 0, 4, 1, 3]) await storage.deliveries.record({ workspaceId: WS }, made[index]!);
        const newest = [...made].reverse();
        const list = (query: { before?: string; limit: number; eventId?: string }) =>
          storage.deliveries.list({ workspaceId: WS }, endpoint.id, query);
        expect(await list({ limit: 10 })).toEqual({ deliveries: newest, hasMore: false });
        expect(await list({ limit: 2 })).toEqual({ deliveries: newest.slice(0, 2), hasMore: true });
        expect(await list({ before: newest[1]!.id, limit: 2 })).toEqual({
          deliveries: newest.slice(2, 4),
          hasMore: true,
        });
        expect(await list({ before: newest[3]!.id, limit: 2 })).toEqual({
          deliveries: newest.slice(4),
          hasMore: false,
        });
        expect(await list({ before: newest[4]!.id, limit: 2 })).toEqual({ deliveries: [], hasMore: false });
        expect(await list({ before: records.id('dlv'), limit: 2 })).toBeNull();
        expect(await storage.deliveries.list({ workspaceId: WS }, records.id('wh'), { limit: 10 })).toEqual({
          deliveries: [],
          hasMore: false,
        });
      });

      test('eventId keeps only that event’s attempts, paging included', async (storage) => {
        const { endpoint, created, updated, attempt } = await world(storage);
        const made = [attempt(created), attempt(updated), attempt(created), attempt(updated), attempt(created)];
        for (const delivery of made) await storage.deliveries.record({ workspaceId: WS }, delivery);
        const ofCreated = made.filter((delivery) => delivery.eventId === created.id).reverse();
        const list = (query: { before?: string; limit: number; eventId?: string }) =>
          storage.deliveries.list({ workspaceId: WS }, endpoint.id, query);
        expect(await list({ limit: 10, eventId: created.id })).toEqual({ deliveries: ofCreated, hasMore: false });
        expect(await list({ limit: 2, eventId: created.id })).toEqual({
          deliveries: ofCreated.slice(0, 2),
          hasMore: true,
        });
        expect(await list({ before: ofCreated[1]!.id, limit: 2, eventId: created.id })).toEqual({
          deliveries: ofCreated.slice(2),
          hasMore: false,
        });
        // `before` may name an attempt of another event: the page is what is older than it.
        expect(await list({ before: made[3]!.id, limit: 10, eventId: created.id })).toEqual({
          deliveries: ofCreated.slice(1),
          hasMore: false,
        });
        expect(await list({ limit: 10, eventId: 'evt_unknown' })).toEqual({ deliveries: [], hasMore: false });
      });

      test('each endpoint lists only its own attempts', async (storage) => {
        const { records, endpoint, created, attempt } = await world(storage);
        const other = await records.insertEndpoint(storage, WS);
        const mine = attempt(created);
        const theirs = records.attempt(other.id, created);
        await storage.deliveries.record({ workspaceId: WS }, mine);
        await storage.deliveries.record({ workspaceId: WS }, theirs);
        expect(
          ids((await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 }))!.deliveries),
        ).toEqual([mine.id]);
        expect(ids((await storage.deliveries.list({ workspaceId: WS }, other.id, { limit: 10 }))!.deliveries)).toEqual([
          theirs.id,
        ]);
        expect(await storage.deliveries.get({ workspaceId: WS }, other.id, mine.id)).toBeNull();
      });

      test('delivered names the events answered with a 2xx at least once', async (storage) => {
        const { endpoint, created, updated, attempt, records } = await world(storage);
        const deleted = records.event(WS, 'agent.deleted', records.agent());
        const never = records.event(WS, 'agent.created', records.agent());
        await storage.deliveries.record({ workspaceId: WS }, attempt(created, { status: 500 }));
        await storage.deliveries.record({ workspaceId: WS }, attempt(created, { status: 204 }));
        await storage.deliveries.record({ workspaceId: WS }, attempt(updated, { status: null, error: 'timeout' }));
        await storage.deliveries.record({ workspaceId: WS }, attempt(updated, { status: 410 }));
        await storage.deliveries.record({ workspaceId: WS }, attempt(deleted, { status: 299 }));
        await storage.deliveries.record({ workspaceId: WS }, attempt(never, { status: 300 }));
        const delivered = await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, [
          created.id,
          updated.id,
          deleted.id,
          never.id,
          'evt_unknown',
        ]);
        expect([...delivered].sort()).toEqual([created.id, deleted.id].sort());
        expect([...(await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, [updated.id]))]).toEqual([]);
        expect([...(await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, []))]).toEqual([]);
      });

      test('attempts recorded at once, for several endpoints and one that is gone, are each kept as recorded alone, as they were when recorded', async (storage) => {
        const { records, endpoint, created, updated, attempt } = await world(storage);
        const other = await records.insertEndpoint(storage, WS);
        const mine = [
          attempt(created, { status: 500 }),
          attempt(created, { status: 204 }),
          attempt(updated, { status: null, error: 'timeout' }),
        ];
        const theirs = [
          records.attempt(other.id, updated, { status: 200 }),
          records.attempt(other.id, created, { status: 503 }),
        ];
        const ghost = records.attempt(records.id('wh'), created);
        const recorded = structuredClone(mine);
        const recording = Promise.all(
          [...mine, ...theirs, ghost].map((each) => storage.deliveries.record({ workspaceId: WS }, each)),
        );
        // An input changed while its record is under way changes nothing stored.
        (mine[0] as { error: string | null }).error = 'changed after record was called';
        await recording;
        expect((await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 }))!.deliveries).toEqual(
          [...recorded].reverse(),
        );
        expect((await storage.deliveries.list({ workspaceId: WS }, other.id, { limit: 10 }))!.deliveries).toEqual(
          [...theirs].reverse(),
        );
        expect(await storage.deliveries.get({ workspaceId: WS }, ghost.endpointId, ghost.id)).toBeNull();
        expect([
          ...(await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, [created.id, updated.id])),
        ]).toEqual([created.id]);
        expect([
          ...(await storage.deliveries.delivered({ workspaceId: WS }, other.id, [created.id, updated.id])),
        ]).toEqual([updated.id]);
      });

      test('recording for a missing endpoint is a no-op; deleting an endpoint removes its log', async (storage) => {
        const { records, endpoint, created, attempt } = await world(storage);
        const ghost = records.attempt(records.id('wh'), created);
        await storage.deliveries.record({ workspaceId: WS }, ghost);
        expect(await storage.deliveries.get({ workspaceId: WS }, ghost.endpointId, ghost.id)).toBeNull();
        const kept = attempt(created);
        await storage.deliveries.record({ workspaceId: WS }, kept);
        await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id);
        expect(await storage.deliveries.get({ workspaceId: WS }, endpoint.id, kept.id)).toBeNull();
        expect(await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 })).toEqual({
          deliveries: [],
          hasMore: false,
        });
        expect([...(await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, [created.id]))]).toEqual([]);
        // An endpoint inserted again under the same id starts with an empty log.
        await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
        expect(await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 })).toEqual({
          deliveries: [],
          hasMore: false,
        });
      });

      test('another workspace can neither record into, read nor list an endpoint’s log', async (storage) => {
        const { endpoint, created, attempt } = await world(storage);
        const mine = attempt(created);
        await storage.deliveries.record({ workspaceId: WS }, mine);
        await storage.deliveries.record({ workspaceId: OTHER_WS }, attempt(created));
        expect(await storage.deliveries.get({ workspaceId: OTHER_WS }, endpoint.id, mine.id)).toBeNull();
        expect(await storage.deliveries.list({ workspaceId: OTHER_WS }, endpoint.id, { limit: 10 })).toEqual({
          deliveries: [],
          hasMore: false,
        });
        expect([...(await storage.deliveries.delivered({ workspaceId: OTHER_WS }, endpoint.id, [created.id]))]).toEqual(
          [],
        );
        expect(await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 })).toEqual({
          deliveries: [mine],
          hasMore: false,
        });
      });

      test('attempts handed out do not alias the log: mutating an input or a result changes nothing stored, and a later record changes no page read before it', async (storage) => {
        const { endpoint, created, updated, attempt } = await world(storage);
        const delivery = attempt(created);
        const expected = structuredClone(delivery);
        await storage.deliveries.record({ workspaceId: WS }, delivery);
        delivery.status = 500;
        const got = (await storage.deliveries.get({ workspaceId: WS }, endpoint.id, expected.id))!;
        mutateResult(() => (got.error = 'mutated'));
        const page = (await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 }))!;
        expect(page).toEqual({ deliveries: [expected], hasMore: false });
        await storage.deliveries.record({ workspaceId: WS }, attempt(updated));
        expect(page).toEqual({ deliveries: [expected], hasMore: false });
      });
    },
  );

  contractGroup(
    t,
    'deliveries retention',
    () => openWith({ eventRetentionMs: SHORT_RETENTION_MS }),
    skip,
    (test) => {
      test('attempts are kept as long as events: older ones are neither read, listed nor counted as delivered', async (storage) => {
        const { endpoint, created, updated, attempt } = await world(storage);
        const old = attempt(created);
        await storage.deliveries.record({ workspaceId: WS }, old);
        await sleep(SHORT_RETENTION_MS + 200);
        const fresh = attempt(updated);
        await storage.deliveries.record({ workspaceId: WS }, fresh);
        expect(await storage.deliveries.get({ workspaceId: WS }, endpoint.id, old.id)).toBeNull();
        expect(await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { limit: 10 })).toEqual({
          deliveries: [fresh],
          hasMore: false,
        });
        expect(
          await storage.deliveries.list({ workspaceId: WS }, endpoint.id, { before: old.id, limit: 10 }),
        ).toBeNull();
        expect([
          ...(await storage.deliveries.delivered({ workspaceId: WS }, endpoint.id, [created.id, updated.id])),
        ]).toEqual([updated.id]);
      });
    },
  );
}
