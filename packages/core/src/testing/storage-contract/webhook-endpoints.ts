/** @module Storage contract: the webhook endpoint store. */
import type { Storage } from '../../ports/storage.js';
import { recordVersion } from '../../record-version.js';
import { EVENT_TYPES, type EventType, type WebhookEndpointRecord } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { mutateResult, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.webhookEndpoints`. */
export function webhookEndpointTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'webhook endpoints', open, skip, (test) => {
    test('insert then get returns an equal record, secret included', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint({ secret: 'a raw secret of some length', enabled: false });
      await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toEqual(endpoint);
      expect((await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id))?.secret).toBe(
        'a raw secret of some length',
      );
    });

    test('get returns null for an unknown id', async (storage) => {
      const records = new Records();
      await storage.webhookEndpoints.insert({ workspaceId: WS }, records.endpoint());
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, records.id('wh'))).toBeNull();
    });

    test('list returns newest first with offset paging; total counts all; offset beyond the end is empty', async (storage) => {
      const records = new Records();
      const made = [records.endpoint(), records.endpoint(), records.endpoint(), records.endpoint(), records.endpoint()];
      for (const index of [1, 4, 0, 3, 2]) await storage.webhookEndpoints.insert({ workspaceId: WS }, made[index]!);
      const newest = [...made].reverse();
      const list = (offset: number, limit: number) =>
        storage.webhookEndpoints.list({ workspaceId: WS }, { offset, limit });

      expect(await list(0, 20)).toEqual({ items: newest, total: 5 });
      expect(await list(0, 2)).toEqual({ items: newest.slice(0, 2), total: 5 });
      expect(await list(2, 2)).toEqual({ items: newest.slice(2, 4), total: 5 });
      expect(await list(4, 2)).toEqual({ items: newest.slice(4), total: 5 });
      expect(await list(5, 2)).toEqual({ items: [], total: 5 });
      expect(await list(99, 1)).toEqual({ items: [], total: 5 });
    });

    test('list is empty with total 0 in an empty workspace', async (storage) => {
      expect(await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 20 })).toEqual({
        items: [],
        total: 0,
      });
    });

    test('update merges the given fields into the stored endpoint and resolves with it', async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS);
      const changed: WebhookEndpointRecord = {
        ...endpoint,
        url: 'https://other.example.com/hook',
        events: ['conversation.completed'],
        enabled: false,
        disabledReason: 'gone',
        secret: 'whsec_bmV3IHNlY3JldCBvZiB0d2VudHkgZm91ciBi',
        previousSecrets: [{ secret: endpoint.secret, expiresAt: '2026-03-03T00:00:00.000Z' }],
        failingSince: '2026-03-01T10:00:00.000Z',
        updatedAt: '2026-03-02T00:00:00.000Z',
      };
      const { id: _id, createdAt: _createdAt, updatedAt, ...set } = changed;
      const result = await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, { set, touch: updatedAt });
      expect(result).toEqual({ outcome: 'applied', record: changed });
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toEqual(changed);
      expect((await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 20 })).items).toEqual([
        changed,
      ]);
    });

    test('update answers unmet (nothing written) when a condition fails, and null for a missing endpoint', async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS, { failingSince: '2026-03-01T10:00:00.000Z' });
      const disable = { set: { enabled: false, disabledReason: 'failing' as const } };
      for (const where of [
        [{ field: 'enabled' as const, equals: false }],
        [{ field: 'failingSince' as const, equals: null }],
        [{ field: 'failingSince' as const, before: '2026-03-01T10:00:00.000Z' }],
      ]) {
        expect(await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, { ...disable, where })).toEqual({
          outcome: 'unmet',
          record: endpoint,
        });
      }
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toEqual(endpoint);
      const applied = await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, {
        ...disable,
        where: [
          { field: 'enabled', equals: true },
          { field: 'failingSince', before: '2026-03-01T10:00:00.001Z' },
        ],
      });
      expect(applied).toEqual({
        outcome: 'applied',
        record: { ...endpoint, enabled: false, disabledReason: 'failing' },
      });
      const ghost = records.endpoint();
      expect(
        await storage.webhookEndpoints.update({ workspaceId: WS }, ghost.id, { set: { enabled: false } }),
      ).toBeNull();
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, ghost.id)).toBeNull();
      expect((await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 20 })).total).toBe(1);
    });

    test('an endpoint subscribed to ["*"] is stored as ["*"] and subscribed to every event type, unless disabled', async (storage) => {
      const records = new Records();
      const all = records.endpoint({ events: ['*'] });
      const disabled = records.endpoint({ events: ['*'], enabled: false });
      const one = records.endpoint({ events: ['message.sent'] });
      for (const endpoint of [all, disabled, one]) await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
      expect((await storage.webhookEndpoints.get({ workspaceId: WS }, all.id))?.events).toEqual(['*']);
      for (const type of EVENT_TYPES) {
        const ids = (await storage.webhookEndpoints.subscribed({ workspaceId: WS }, type))
          .map((endpoint) => endpoint.id)
          .sort();
        expect({ type, ids }).toEqual({ type, ids: (type === 'message.sent' ? [all.id, one.id] : [all.id]).sort() });
      }
    });

    test('subscribed returns every enabled endpoint subscribed to the type, and only those', async (storage) => {
      const records = new Records();
      const both = await records.insertEndpoint(storage, WS, { events: ['agent.created', 'message.sent'] });
      const agentsOnly = await records.insertEndpoint(storage, WS, { events: ['agent.created'] });
      await records.insertEndpoint(storage, WS, { events: ['agent.created'], enabled: false, disabledReason: 'gone' });
      await records.insertEndpoint(storage, WS, { events: ['conversation.started'] });
      const sorted = (endpoints: WebhookEndpointRecord[]) => [...endpoints].sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(sorted(await storage.webhookEndpoints.subscribed({ workspaceId: WS }, 'agent.created'))).toEqual([
        both,
        agentsOnly,
      ]);
      expect(await storage.webhookEndpoints.subscribed({ workspaceId: WS }, 'message.sent')).toEqual([both]);
      expect(await storage.webhookEndpoints.subscribed({ workspaceId: WS }, 'agent.deleted')).toEqual([]);
      await storage.webhookEndpoints.update({ workspaceId: WS }, both.id, { set: { enabled: false } });
      await storage.webhookEndpoints.update({ workspaceId: WS }, agentsOnly.id, { set: { events: ['agent.updated'] } });
      expect(await storage.webhookEndpoints.subscribed({ workspaceId: WS }, 'agent.created')).toEqual([]);
      expect(await storage.webhookEndpoints.subscribed({ workspaceId: WS }, 'agent.updated')).toEqual([
        { ...agentsOnly, events: ['agent.updated'] },
      ]);
    });

    test('delete answers applied with the endpoint once, then null; the endpoint can no longer be read', async (storage) => {
      const records = new Records();
      const kept = records.endpoint();
      const endpoint = records.endpoint();
      await storage.webhookEndpoints.insert({ workspaceId: WS }, kept);
      await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
      expect(await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id)).toEqual({
        outcome: 'applied',
        record: endpoint,
      });
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 20 })).toEqual({
        items: [kept],
        total: 1,
      });
      expect(
        await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, { set: { enabled: true } }),
      ).toBeNull();
      expect(await storage.webhookEndpoints.subscribed({ workspaceId: WS }, 'agent.created')).toEqual([kept]);
      expect(await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.delete({ workspaceId: WS }, records.id('wh'))).toBeNull();
    });

    test('delete with ifVersion: a version not listed deletes nothing and answers unmet with the endpoint as stored', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
      const disabled = (await storage.webhookEndpoints.update({ workspaceId: WS }, endpoint.id, {
        set: { enabled: false },
      }))!.record;
      expect(recordVersion(disabled)).toBe(2);
      expect(await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id, { ifVersion: [1, 3] })).toEqual({
        outcome: 'unmet',
        record: { ...endpoint, enabled: false },
      });
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toEqual({
        ...endpoint,
        enabled: false,
      });
      expect(await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id, { ifVersion: [1, 2] })).toEqual({
        outcome: 'applied',
        record: { ...endpoint, enabled: false },
      });
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.delete({ workspaceId: WS }, endpoint.id, { ifVersion: [2] })).toBeNull();
    });

    test('records handed out do not alias stored state: mutating an input or a result changes nothing stored, and a later write changes no record read before it', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      const expected = structuredClone(endpoint);
      await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
      endpoint.events.push('agent.deleted');
      endpoint.secret = 'mutated input';

      const got = (await storage.webhookEndpoints.get({ workspaceId: WS }, expected.id))!;
      mutateResult(() => (got.events.length = 0));
      mutateResult(() => (got.enabled = false));
      const listed = (await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items[0]!;
      mutateResult(() => listed.events.push('message.received'));
      mutateResult(() => (listed.url = 'https://mutated.example.com'));
      const [subscribed] = await storage.webhookEndpoints.subscribed(
        { workspaceId: WS },
        expected.events[0] as EventType,
      );
      mutateResult(() => (subscribed!.secret = 'mutated subscribed'));

      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, expected.id)).toEqual(expected);
      expect((await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items).toEqual([
        expected,
      ]);

      const read = (await storage.webhookEndpoints.get({ workspaceId: WS }, expected.id))!;
      await storage.webhookEndpoints.update({ workspaceId: WS }, expected.id, {
        set: { enabled: false, events: ['agent.deleted'] },
      });
      expect(read).toEqual(expected);
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, expected.id)).toEqual({
        ...expected,
        enabled: false,
        events: ['agent.deleted'],
      });
    });
  });
}
