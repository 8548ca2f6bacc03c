/**
 * @module Test support: `RedisApiKeyStore.upsert`, which start-up uses to provision `API_KEYS`
 * from several instances at once — the same raw key must end up stored exactly once.
 */
import type { ApiKeyRecord } from '@parley/core';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connection.js';
import { apiKeyKeys } from '../src/keys.js';
import { RedisApiKeyStore } from '../src/redis-api-keys.js';
import { KEY_REVOKE } from '../src/redis-api-keys.lua.js';
import type { LuaScript, ScriptCall } from '../src/script.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

let serial = 0;

/** A record for raw key `raw`, with a new key id and creation time each call. */
function record(raw: string, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  serial += 1;
  return {
    keyId: `key_${String(serial).padStart(6, '0')}`,
    workspaceId: 'acme',
    plan: 'pro',
    scopes: ['*'],
    hash: createHash('sha256').update(raw).digest('hex'),
    createdAt: new Date(Date.parse('2026-03-01T09:00:00.000Z') + serial * 1000).toISOString(),
    ...extra,
  };
}

/** The store, plus a hook to make a race happen at one exact moment. */
class RacingApiKeyStore extends RedisApiKeyStore {
  /** Runs `between` once, right before the next revoke script is sent. */
  beforeRevokeScript(between: () => Promise<unknown>): void {
    const script = this.runner.script.bind(this.runner);
    this.runner.script = async <K extends string, A extends string>(lua: LuaScript<K, A>, call: ScriptCall<K, A>) => {
      if ((lua as LuaScript) === KEY_REVOKE) {
        this.runner.script = script;
        await between();
      }
      return script(lua, call);
    };
  }
}

function withKeys(client: () => RedisClient, body: (store: RacingApiKeyStore, prefix: string) => Promise<void>) {
  return async () => {
    const prefix = uniquePrefix('upsert');
    try {
      await body(new RacingApiKeyStore({ client: client(), prefix }), prefix);
    } finally {
      await deletePrefix(client(), prefix);
    }
  };
}

/** Registers the upsert tests over `client()`. */
export function runApiKeyUpsertTests(client: () => RedisClient): void {
  describe('RedisApiKeyStore.upsert', () => {
    it('creates a key once; the same raw key again is unchanged and keeps the first id', withKeys(client, async (store) => {
      const first = record('raw-key-one');
      expect(await store.upsert(first)).toEqual({ outcome: 'created', record: first });
      const again = record('raw-key-one');
      expect(await store.upsert(again)).toEqual({ outcome: 'unchanged', record: first });
      expect(await store.list()).toEqual([first]);
      expect(await store.findByHash(first.hash)).toEqual(first);
    }));

    it('stores a key exactly once when 25 upserts of it race', withKeys(client, async (store) => {
      const racing = Array.from({ length: 25 }, () => record('raw-key-race'));
      const results = await Promise.all(racing.map((candidate) => store.upsert(candidate)));
      expect(results.filter((result) => result.outcome === 'created')).toHaveLength(1);
      const [stored, ...more] = await store.list();
      expect(more).toEqual([]);
      expect(await store.list('acme')).toEqual([stored]);
      for (const result of results) expect(result.record).toEqual(stored);
    }));

    it('updates plan, scopes and limit in place, keeping the key id and creation time', withKeys(client, async (store) => {
      const first = record('raw-key-update');
      await store.upsert(first);
      const changed = record('raw-key-update', { plan: 'enterprise', scopes: [], limitPerHour: 5000 });
      const expected = { ...changed, keyId: first.keyId, createdAt: first.createdAt };
      expect(await store.upsert(changed)).toEqual({ outcome: 'updated', record: expected });
      expect(await store.findByHash(first.hash)).toEqual(expected);
      // Back to no limit: the field disappears rather than staying behind.
      const plain = record('raw-key-update');
      await store.upsert(plain);
      expect('limitPerHour' in (await store.findByHash(first.hash))!).toBe(false);
    }));

    it('moves a key to another workspace: it leaves the old workspace list, revoke still works', withKeys(client, async (store) => {
      const first = record('raw-key-move');
      const neighbour = record('raw-key-stays');
      await store.upsert(first);
      await store.upsert(neighbour);
      await store.upsert(record('raw-key-move', { workspaceId: 'globex' }));
      expect(await store.list('acme')).toEqual([neighbour]);
      expect(await store.list('globex')).toEqual([{ ...first, workspaceId: 'globex' }]);
      expect(await store.revoke(first.keyId)).toBe(true);
      expect(await store.list()).toEqual([neighbour]);
    }));

    it('revokes a key an upsert moves to another workspace meanwhile, leaving it in no index', withKeys(client, async (store, prefix) => {
      const first = record('raw-key-revoke');
      await store.upsert(first);
      store.beforeRevokeScript(() => store.upsert(record('raw-key-revoke', { workspaceId: 'globex' })));
      expect(await store.revoke(first.keyId)).toBe(true);
      expect(await store.findByHash(first.hash)).toBeNull();
      expect(await client().zcard(apiKeyKeys(prefix).byWorkspace('globex'))).toBe(0);
      expect(await store.revoke(first.keyId)).toBe(false);
    }));

    it('ends in one consistent record when different grants of one key race', withKeys(client, async (store) => {
      await store.upsert(record('raw-key-fight'));
      const grants = ['acme', 'globex', 'initech', 'acme', 'globex'].map((workspaceId) => record('raw-key-fight', { workspaceId }));
      await Promise.all(grants.map((grant) => store.upsert(grant)));
      const all = await store.list();
      expect(all).toHaveLength(1);
      const listed = await Promise.all(['acme', 'globex', 'initech'].map((workspace) => store.list(workspace)));
      expect(listed.flat()).toEqual(all);
    }));
  });
}
