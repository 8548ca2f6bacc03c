/**
 * @module Test support: `RedisApiKeyStore.upsert` racing a revoke at one exact moment (the
 * upsert behaviour every adapter shares is in core's API key contract).
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
    it(
      'revokes a key an upsert moves to another workspace meanwhile, leaving it in no index',
      withKeys(client, async (store, prefix) => {
        const first = record('raw-key-revoke');
        await store.upsert(first);
        store.beforeRevokeScript(() => store.upsert(record('raw-key-revoke', { workspaceId: 'globex' })));
        expect(await store.revoke(first.keyId)).toBe(true);
        expect(await store.findByHash(first.hash)).toBeNull();
        expect(await client().zcard(apiKeyKeys(prefix).byWorkspace('globex'))).toBe(0);
        expect(await store.revoke(first.keyId)).toBe(false);
      }),
    );
  });
}
