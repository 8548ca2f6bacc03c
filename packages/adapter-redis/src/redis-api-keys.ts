/**
 * @module API keys on Redis: global (looked up by hash), under the hash tag `{keys}` so every
 * script's keys share one Cluster slot.
 */
import type { ApiKeyRecord } from '@parley/core';
import { regrantApiKey, sameApiKeyGrant, type ApiKeyStore, type ApiKeyUpsert } from '@parley/core/adapter';
import { RedisAdapter } from './connection.js';
import { apiKeyKeys } from './keys.js';
import { KEY_BY_ID, KEY_INSERT, KEY_INSERT_NEW, KEY_LIST, KEY_REPLACE, KEY_REVOKE } from './redis-api-keys.lua.js';
import { records, strings } from './script.js';

/** How often an upsert or revoke retries when another writer changed the same key in between. */
const ATTEMPTS = 5;

/**
 * {@link ApiKeyStore} on Redis. `findByHash` (an authenticated request whose key core's
 * `ApiKeyService` has not cached: docs/authentication.md#revocation) is one HGET, O(1);
 * `insert` and `list` are one script each; `revoke` is two round trips (read the key's
 * workspace, then a script that deletes it only if it is unchanged, else both again) because the
 * workspace index key depends on the stored record. Options as for `RedisStorage`.
 * @throws ParleyError `service_unavailable` from every method when Redis cannot be reached.
 */
export class RedisApiKeyStore extends RedisAdapter implements ApiKeyStore {
  private get keys() {
    return apiKeyKeys(this.runner.prefix);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const raw = await this.runner.run((client) => client.hget(this.keys.byHash, hash));
    return raw === null ? null : (JSON.parse(raw) as ApiKeyRecord);
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    const keys = this.keys;
    await this.runner.script(KEY_INSERT, {
      keys: { byHash: keys.byHash, byId: keys.byId, all: keys.all, byWorkspace: keys.byWorkspace(record.workspaceId) },
      args: {
        hash: record.hash,
        keyId: record.keyId,
        json: JSON.stringify(record),
        createdAt: scoreOf(record.createdAt),
      },
    });
  }

  /**
   * Stores `record` unless a key with its hash exists (`created`). An existing key keeps its
   * `keyId` and `createdAt`; when its workspace, plan, scopes or `limitPerHour` differ from
   * `record`'s, they are replaced (`updated`), else nothing is written (`unchanged`). Meant for
   * keys provisioned from configuration at start-up: several instances upserting the same raw
   * key at once store it exactly once (insert-if-absent and compare-and-set scripts; a writer
   * that loses a race re-reads and retries).
   * @throws ParleyError `service_unavailable` when Redis cannot be reached; `Error` when the key
   * kept changing under {@link ATTEMPTS} attempts.
   */
  async upsert(record: ApiKeyRecord): Promise<ApiKeyUpsert> {
    const keys = this.keys;
    const createdAt = scoreOf(record.createdAt);
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const stored = await this.runner.script(KEY_INSERT_NEW, {
        keys: {
          byHash: keys.byHash,
          byId: keys.byId,
          all: keys.all,
          byWorkspace: keys.byWorkspace(record.workspaceId),
        },
        args: { hash: record.hash, keyId: record.keyId, json: JSON.stringify(record), createdAt },
      });
      if (typeof stored !== 'string') return { outcome: 'created', record };
      const existing = JSON.parse(stored) as ApiKeyRecord;
      const wanted = regrantApiKey(existing, record);
      if (sameApiKeyGrant(existing, wanted)) return { outcome: 'unchanged', record: existing };
      const replaced = await this.runner.script(KEY_REPLACE, {
        keys: {
          byHash: keys.byHash,
          oldWorkspace: keys.byWorkspace(existing.workspaceId),
          newWorkspace: keys.byWorkspace(wanted.workspaceId),
        },
        args: {
          hash: record.hash,
          expected: stored,
          json: JSON.stringify(wanted),
          keyId: wanted.keyId,
          createdAt: scoreOf(wanted.createdAt),
        },
      });
      if (replaced === 1) return { outcome: 'updated', record: wanted };
    }
    throw new Error(`API key ${record.keyId} kept changing during ${ATTEMPTS} upsert attempts.`);
  }

  /** Ordered by `createdAt` (then key id); O(keys listed). */
  async list(workspaceId?: string): Promise<ApiKeyRecord[]> {
    const keys = this.keys;
    const index = workspaceId === undefined ? keys.all : keys.byWorkspace(workspaceId);
    return records<ApiKeyRecord>(
      strings(await this.runner.script(KEY_LIST, { keys: { index, byId: keys.byId, byHash: keys.byHash }, args: {} })),
    );
  }

  /**
   * @throws ParleyError `service_unavailable` when Redis cannot be reached; `Error` when the key
   * kept changing under {@link ATTEMPTS} attempts.
   */
  async revoke(keyId: string): Promise<boolean> {
    const keys = this.keys;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const raw = await this.runner.script(KEY_BY_ID, {
        keys: { byId: keys.byId, byHash: keys.byHash },
        args: { keyId },
      });
      if (typeof raw !== 'string') return false;
      const record = JSON.parse(raw) as ApiKeyRecord;
      const reply = await this.runner.script(KEY_REVOKE, {
        keys: {
          byHash: keys.byHash,
          byId: keys.byId,
          all: keys.all,
          byWorkspace: keys.byWorkspace(record.workspaceId),
        },
        args: { keyId, hash: record.hash, expected: raw },
      });
      if (reply === 1) return true;
    }
    throw new Error(`API key ${keyId} kept changing during ${ATTEMPTS} revoke attempts.`);
  }
}

/** An ISO timestamp as an index score (ms); 0 for an unparseable one. */
function scoreOf(createdAt: string): number {
  const ms = Date.parse(createdAt);
  return Number.isFinite(ms) ? ms : 0;
}
