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
 * Registers the contract tests of `ports/api-keys.ts` (findByHash, insert, list, revoke) with
 * the caller's test runner, e.g. `runApiKeyStoreContract({ describe, it, expect }, () => new MemoryApiKeyStore())`.
 */
export function runApiKeyStoreContract(t: ContractTestApi, factory: ApiKeyStoreFactory, options: ApiKeyStoreContractOptions = {}): void {
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
