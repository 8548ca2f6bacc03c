/** @module Storage contract: the webhook endpoint store. */
import type { Storage } from '../../ports/storage.js';
import { EVENT_TYPES, type EventType, type WebhookEndpointRecord } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { mutateResult, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.webhookEndpoints`. */
export function webhookEndpointTests(t: ContractTestApi, open: () => Promise<OpenedFixture<Storage>>, skip: readonly string[]): void {
  const { expect } = t;
  contractGroup(t, 'webhook endpoints', open, skip, (test) => {
    test('insert then get returns an equal record, secret included', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint({ secret: 'a raw secret of some length', enabled: false });
      await storage.webhookEndpoints.insert(WS, endpoint);
      expect(await storage.webhookEndpoints.get(WS, endpoint.id)).toEqual(endpoint);
      expect((await storage.webhookEndpoints.get(WS, endpoint.id))?.secret).toBe('a raw secret of some length');
    });

    test('get returns null for an unknown id', async (storage) => {
      const records = new Records();
      await storage.webhookEndpoints.insert(WS, records.endpoint());
      expect(await storage.webhookEndpoints.get(WS, records.id('wh'))).toBeNull();
    });

    test('list returns newest first with offset paging; total counts all; offset beyond the end is empty', async (storage) => {
      const records = new Records();
      const made = [records.endpoint(), records.endpoint(), records.endpoint(), records.endpoint(), records.endpoint()];
      for (const index of [1, 4, 0, 3, 2]) await storage.webhookEndpoints.insert(WS, made[index]!);
      const newest = [...made].reverse();
      const list = (offset: number, limit: number) => storage.webhookEndpoints.list(WS, { offset, limit });

      expect(await list(0, 20)).toEqual({ items: newest, total: 5 });
      expect(await list(0, 2)).toEqual({ items: newest.slice(0, 2), total: 5 });
      expect(await list(2, 2)).toEqual({ items: newest.slice(2, 4), total: 5 });
      expect(await list(4, 2)).toEqual({ items: newest.slice(4), total: 5 });
      expect(await list(5, 2)).toEqual({ items: [], total: 5 });
      expect(await list(99, 1)).toEqual({ items: [], total: 5 });
    });

    test('list is empty with total 0 in an empty workspace', async (storage) => {
      expect(await storage.webhookEndpoints.list(WS, { offset: 0, limit: 20 })).toEqual({ items: [], total: 0 });
    });

    test('update stores the record the function returns and resolves with it', async (storage) => {
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
      let seen: unknown;
      const result = await storage.webhookEndpoints.update(WS, endpoint.id, (current) => {
        seen = current;
        return { record: changed };
      });
      expect(seen).toEqual(endpoint);
      expect(result).toEqual(changed);
      expect(await storage.webhookEndpoints.get(WS, endpoint.id)).toEqual(changed);
      expect((await storage.webhookEndpoints.list(WS, { offset: 0, limit: 20 })).items).toEqual([changed]);
    });

    test('update resolves with the stored endpoint when the function returns null, and with null for a missing one', async (storage) => {
      const records = new Records();
      const endpoint = await records.insertEndpoint(storage, WS);
      expect(await storage.webhookEndpoints.update(WS, endpoint.id, () => null)).toEqual(endpoint);
      const ghost = records.endpoint();
      let called = false;
      const result = await storage.webhookEndpoints.update(WS, ghost.id, () => {
        called = true;
        return { record: ghost };
      });
      expect(result).toBeNull();
      expect(called).toBe(false);
      expect(await storage.webhookEndpoints.get(WS, ghost.id)).toBeNull();
      expect((await storage.webhookEndpoints.list(WS, { offset: 0, limit: 20 })).total).toBe(1);
    });

    test('an endpoint subscribed to ["*"] is stored as ["*"] and subscribed to every event type, unless disabled', async (storage) => {
      const records = new Records();
      const all = records.endpoint({ events: ['*'] });
      const disabled = records.endpoint({ events: ['*'], enabled: false });
      const one = records.endpoint({ events: ['message.sent'] });
      for (const endpoint of [all, disabled, one]) await storage.webhookEndpoints.insert(WS, endpoint);
      expect((await storage.webhookEndpoints.get(WS, all.id))?.events).toEqual(['*']);
      for (const type of EVENT_TYPES) {
        const ids = (await storage.webhookEndpoints.subscribed(WS, type)).map((endpoint) => endpoint.id).sort();
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
      expect(sorted(await storage.webhookEndpoints.subscribed(WS, 'agent.created'))).toEqual([both, agentsOnly]);
      expect(await storage.webhookEndpoints.subscribed(WS, 'message.sent')).toEqual([both]);
      expect(await storage.webhookEndpoints.subscribed(WS, 'agent.deleted')).toEqual([]);
      await storage.webhookEndpoints.update(WS, both.id, (current) => ({ record: { ...current, enabled: false } }));
      await storage.webhookEndpoints.update(WS, agentsOnly.id, (current) => ({ record: { ...current, events: ['agent.updated'] } }));
      expect(await storage.webhookEndpoints.subscribed(WS, 'agent.created')).toEqual([]);
      expect(await storage.webhookEndpoints.subscribed(WS, 'agent.updated')).toEqual([{ ...agentsOnly, events: ['agent.updated'] }]);
    });

    test('delete returns true once, then false; the endpoint can no longer be read', async (storage) => {
      const records = new Records();
      const kept = records.endpoint();
      const endpoint = records.endpoint();
      await storage.webhookEndpoints.insert(WS, kept);
      await storage.webhookEndpoints.insert(WS, endpoint);
      expect(await storage.webhookEndpoints.delete(WS, endpoint.id)).toBe(true);
      expect(await storage.webhookEndpoints.get(WS, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.list(WS, { offset: 0, limit: 20 })).toEqual({ items: [kept], total: 1 });
      expect(await storage.webhookEndpoints.update(WS, endpoint.id, () => ({ record: endpoint }))).toBeNull();
      expect(await storage.webhookEndpoints.subscribed(WS, 'agent.created')).toEqual([kept]);
      expect(await storage.webhookEndpoints.delete(WS, endpoint.id)).toBe(false);
      expect(await storage.webhookEndpoints.delete(WS, records.id('wh'))).toBe(false);
    });

    test('delete with a check: a throwing check deletes nothing; the check sees the record as stored', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      await storage.webhookEndpoints.insert(WS, endpoint);
      await storage.webhookEndpoints.update(WS, endpoint.id, (current) => ({ record: { ...current, enabled: false } }));
      const refusal = new Error('precondition');
      const thrown = await storage.webhookEndpoints
        .delete(WS, endpoint.id, (current) => {
          if (!current.enabled) throw refusal;
        })
        .catch((error: unknown) => error);
      expect(thrown).toBe(refusal);
      expect(await storage.webhookEndpoints.get(WS, endpoint.id)).toEqual({ ...endpoint, enabled: false });
      const seen: boolean[] = [];
      expect(await storage.webhookEndpoints.delete(WS, endpoint.id, (current) => void seen.push(current.enabled))).toBe(true);
      expect(seen.at(-1)).toBe(false);
      expect(await storage.webhookEndpoints.get(WS, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.delete(WS, endpoint.id, () => void seen.push(true))).toBe(false);
    });

    test('records handed out do not alias stored state: mutating an input or a result changes nothing stored, and a later write changes no record read before it', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      const expected = structuredClone(endpoint);
      await storage.webhookEndpoints.insert(WS, endpoint);
      endpoint.events.push('agent.deleted');
      endpoint.secret = 'mutated input';

      const got = (await storage.webhookEndpoints.get(WS, expected.id))!;
      mutateResult(() => (got.events.length = 0));
      mutateResult(() => (got.enabled = false));
      const listed = (await storage.webhookEndpoints.list(WS, { offset: 0, limit: 1 })).items[0]!;
      mutateResult(() => listed.events.push('message.received'));
      mutateResult(() => (listed.url = 'https://mutated.example.com'));
      const [subscribed] = await storage.webhookEndpoints.subscribed(WS, expected.events[0] as EventType);
      mutateResult(() => (subscribed!.secret = 'mutated subscribed'));

      expect(await storage.webhookEndpoints.get(WS, expected.id)).toEqual(expected);
      expect((await storage.webhookEndpoints.list(WS, { offset: 0, limit: 1 })).items).toEqual([expected]);

      const read = (await storage.webhookEndpoints.get(WS, expected.id))!;
      await storage.webhookEndpoints.update(WS, expected.id, (current) => ({ record: { ...current, enabled: false, events: ['agent.deleted'] } }));
      expect(read).toEqual(expected);
      expect(await storage.webhookEndpoints.get(WS, expected.id)).toEqual({ ...expected, enabled: false, events: ['agent.deleted'] });
    });
  });
}
