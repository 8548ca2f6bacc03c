/** @module `runApiKeyStoreContract`: the API key port's contract, run by every key store adapter. */
import { createHash } from 'node:crypto';
import type { ApiKeyStore } from '../ports/api-keys.js';
import type { ApiKeyRecord } from '../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from './contract.js';

/** An API key store under test together with what removes its data afterwards. */
export interface ApiKeyStoreFixture {
  apiKeys: ApiKeyStore;
  /** Called after each test, also when it failed. */
  cleanup?: () => void | Promise<void>;
}

/** Returns a fresh, empty key store for one test, or an {@link ApiKeyStoreFixture}. */
export type ApiKeyStoreFactory = () => ApiKeyStore | ApiKeyStoreFixture | Promise<ApiKeyStore | ApiKeyStoreFixture>;

/** Options of {@link runApiKeyStoreContract}: `skip` names opted-out tests as `'api keys: <title>'`. */
export interface ApiKeyStoreContractOptions {
  skip?: readonly string[];
}

const hash = (key: string) => createHash('sha256').update(key).digest('hex');

/** A key record created `minute` minutes after a fixed instant. */
function key(name: string, workspaceId: string, minute: number, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    keyId: `key_${name}`,
    workspaceId,
    plan: 'pro',
    scopes: ['agents:read', 'conversations:write'],
    hash: hash(`prl_${name}`),
    createdAt: new Date(Date.parse('2026-03-01T09:00:00.000Z') + minute * 60_000).toISOString(),
    ...extra,
  };
}

async function openApiKeys(factory: ApiKeyStoreFactory): Promise<OpenedFixture<ApiKeyStore>> {
  const made = await factory();
  if ('apiKeys' in made) return { subject: made.apiKeys, cleanup: async () => made.cleanup?.() };
  return { subject: made, cleanup: async () => {} };
}

/**
 * Registers the contract tests of `ports/api-keys.ts` (findByHash, insert, upsert, list, revoke) with
 * the caller's test runner, e.g. `runApiKeyStoreContract({ describe, it, expect }, () => new MemoryApiKeyStore())`.
 */
export function runApiKeyStoreContract(
  t: ContractTestApi,
  factory: ApiKeyStoreFactory,
  options: ApiKeyStoreContractOptions = {},
): void {
  const { expect } = t;
  const open = () => openApiKeys(factory);
  contractGroup(t, 'api keys', open, options.skip ?? [], (test) => {
    test('insert then findByHash returns an equal record; an unknown hash is null', async (store) => {
      const record = key('alpha', 'ws_a', 0);
      const enterprise = key('beta', 'ws_b', 1, { plan: 'enterprise', scopes: ['*'], limitPerHour: 50_000 });
      await store.insert(record);
      await store.insert(enterprise);
      expect(await store.findByHash(record.hash)).toEqual(record);
      expect(await store.findByHash(enterprise.hash)).toEqual(enterprise);
      expect('limitPerHour' in (await store.findByHash(record.hash))!).toBe(false);
      expect(await store.findByHash(hash('prl_unknown'))).toBeNull();
      expect(await store.findByHash('')).toBeNull();
    });

    test('a key with no scopes keeps its empty scope list', async (store) => {
      const record = key('none', 'ws_a', 0, { scopes: [] });
      await store.insert(record);
      expect(await store.findByHash(record.hash)).toEqual(record);
    });

    test('list returns every key ordered by createdAt, or those of one workspace', async (store) => {
      expect(await store.list()).toEqual([]);
      const later = key('later', 'ws_a', 30);
      const first = key('first', 'ws_b', 0);
      const middle = key('middle', 'ws_a', 10);
      for (const record of [later, first, middle]) await store.insert(record);
      expect(await store.list()).toEqual([first, middle, later]);
      expect(await store.list('ws_a')).toEqual([middle, later]);
      expect(await store.list('ws_b')).toEqual([first]);
      expect(await store.list('ws_none')).toEqual([]);
    });

    test('revoke deletes the key with that keyId once; unknown ids return false', async (store) => {
      const revoked = key('revoked', 'ws_a', 0);
      const kept = key('kept', 'ws_a', 1);
      await store.insert(revoked);
      await store.insert(kept);
      expect(await store.revoke(revoked.keyId)).toBe(true);
      expect(await store.findByHash(revoked.hash)).toBeNull();
      expect(await store.list('ws_a')).toEqual([kept]);
      expect(await store.list()).toEqual([kept]);
      expect(await store.revoke(revoked.keyId)).toBe(false);
      expect(await store.revoke('key_unknown')).toBe(false);
      expect(await store.findByHash(kept.hash)).toEqual(kept);
    });

    test('upsert creates a key once; the same raw key again is unchanged and keeps the first id', async (store) => {
      const first = key('up', 'ws_a', 0);
      expect(await store.upsert(first)).toEqual({ outcome: 'created', record: first });
      const again = key('up', 'ws_a', 5, { keyId: 'key_second' });
      expect(await store.upsert(again)).toEqual({ outcome: 'unchanged', record: first });
      expect(await store.list()).toEqual([first]);
      expect(await store.findByHash(first.hash)).toEqual(first);
    });

    test('upsert stores a key exactly once when 25 upserts of it race', async (store) => {
      const racing = Array.from({ length: 25 }, (_, index) =>
        key('race', 'ws_a', index, { keyId: `key_race_${index}` }),
      );
      const results = await Promise.all(racing.map((candidate) => store.upsert(candidate)));
      expect(results.filter((result) => result.outcome === 'created')).toHaveLength(1);
      const [stored, ...more] = await store.list();
      expect(more).toEqual([]);
      expect(await store.list('ws_a')).toEqual([stored]);
      for (const result of results) expect(result.record).toEqual(stored);
    });

    test('upsert updates plan, scopes and limit in place, keeping key id and creation time; a dropped limit disappears', async (store) => {
      const first = key('regrant', 'ws_a', 0);
      await store.upsert(first);
      const changed = key('regrant', 'ws_a', 9, {
        keyId: 'key_other',
        plan: 'enterprise',
        scopes: [],
        limitPerHour: 5000,
      });
      const expected = { ...changed, keyId: first.keyId, createdAt: first.createdAt };
      expect(await store.upsert(changed)).toEqual({ outcome: 'updated', record: expected });
      expect(await store.findByHash(first.hash)).toEqual(expected);
      expect(await store.upsert(key('regrant', 'ws_a', 10))).toEqual({ outcome: 'updated', record: first });
      expect('limitPerHour' in (await store.findByHash(first.hash))!).toBe(false);
    });

    test('upsert moves a key to another workspace: it leaves the old listing, and revoke still works', async (store) => {
      const moved = key('mover', 'ws_a', 0);
      const neighbour = key('stays', 'ws_a', 1);
      await store.upsert(moved);
      await store.insert(neighbour);
      await store.upsert(key('mover', 'ws_b', 2));
      expect(await store.list('ws_a')).toEqual([neighbour]);
      expect(await store.list('ws_b')).toEqual([{ ...moved, workspaceId: 'ws_b' }]);
      expect(await store.revoke(moved.keyId)).toBe(true);
      expect(await store.list()).toEqual([neighbour]);
      expect(await store.list('ws_b')).toEqual([]);
    });

    test('upsert ends in one consistent record when different grants of one key race', async (store) => {
      await store.upsert(key('fight', 'ws_a', 0));
      const grants = ['ws_a', 'ws_b', 'ws_c', 'ws_a', 'ws_b'].map((workspaceId, index) =>
        key('fight', workspaceId, index + 1),
      );
      await Promise.all(grants.map((grant) => store.upsert(grant)));
      const all = await store.list();
      expect(all).toHaveLength(1);
      const listed = await Promise.all(['ws_a', 'ws_b', 'ws_c'].map((workspaceId) => store.list(workspaceId)));
      expect(listed.flat()).toEqual(all);
      expect(await store.findByHash(all[0]!.hash)).toEqual(all[0]);
    });

    test('upsert returns copies: mutating the result changes nothing stored', async (store) => {
      const record = key('upcopy', 'ws_a', 0);
      const expected = structuredClone(record);
      const { record: returned } = await store.upsert(record);
      (returned.scopes as string[]).push('*');
      (record.scopes as string[]).push('webhooks:write');
      expect(await store.findByHash(expected.hash)).toEqual(expected);
    });

    test('returned records are copies: mutating an input or a result changes nothing stored', async (store) => {
      const record = key('copied', 'ws_a', 0);
      const expected = structuredClone(record);
      await store.insert(record);
      (record.scopes as string[]).push('webhooks:write');
      record.plan = 'free';
      const found = (await store.findByHash(expected.hash))!;
      (found.scopes as string[]).length = 0;
      found.workspaceId = 'ws_mutated';
      const [listed] = await store.list();
      (listed!.scopes as string[]).push('*');
      expect(await store.findByHash(expected.hash)).toEqual(expected);
      expect(await store.list('ws_a')).toEqual([expected]);
    });
  });
}
