/** @module Storage contract: the webhook endpoint store. */
import type { Storage } from '../../ports/storage.js';
import type { WebhookEndpointRecord } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { Records, WS } from './fixtures.js';

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

    test('replace overwrites an existing endpoint and returns true', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      await storage.webhookEndpoints.insert(WS, endpoint);
      const changed: WebhookEndpointRecord = {
        ...endpoint,
        url: 'https://other.example.com/hook',
        events: ['conversation.completed'],
        enabled: false,
        secret: 'whsec_bmV3IHNlY3JldCBvZiB0d2VudHkgZm91ciBi',
        updatedAt: '2026-03-02T00:00:00.000Z',
      };
      expect(await storage.webhookEndpoints.replace(WS, changed)).toBe(true);
      expect(await storage.webhookEndpoints.get(WS, endpoint.id)).toEqual(changed);
      expect((await storage.webhookEndpoints.list(WS, { offset: 0, limit: 20 })).items).toEqual([changed]);
    });

    test('replace returns false and writes nothing for a missing endpoint', async (storage) => {
      const records = new Records();
      const ghost = records.endpoint();
      expect(await storage.webhookEndpoints.replace(WS, ghost)).toBe(false);
      expect(await storage.webhookEndpoints.get(WS, ghost.id)).toBeNull();
      expect((await storage.webhookEndpoints.list(WS, { offset: 0, limit: 20 })).total).toBe(0);
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
      expect(await storage.webhookEndpoints.replace(WS, endpoint)).toBe(false);
      expect(await storage.webhookEndpoints.delete(WS, endpoint.id)).toBe(false);
      expect(await storage.webhookEndpoints.delete(WS, records.id('wh'))).toBe(false);
    });

    test('returned records are copies: mutating an input or a result changes nothing stored', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      const expected = structuredClone(endpoint);
      await storage.webhookEndpoints.insert(WS, endpoint);
      endpoint.events.push('agent.deleted');
      endpoint.secret = 'mutated input';

      const got = (await storage.webhookEndpoints.get(WS, expected.id))!;
      got.events.length = 0;
      got.enabled = false;
      const listed = (await storage.webhookEndpoints.list(WS, { offset: 0, limit: 1 })).items[0]!;
      listed.events.push('message.received');
      listed.url = 'https://mutated.example.com';

      expect(await storage.webhookEndpoints.get(WS, expected.id)).toEqual(expected);
      expect((await storage.webhookEndpoints.list(WS, { offset: 0, limit: 1 })).items).toEqual([expected]);
    });
  });
}
