/**
 * @module API keys on Redis: global (looked up by hash), under the hash tag `{keys}` so every
 * script's keys share one Cluster slot.
 */
import type { ApiKeyRecord, ApiKeyStore } from '@parley/core';
import { DEFAULT_TIMEOUT_MS, RedisRunner, closeClient, connect, type RedisAdapterOptions, type RedisClient } from './connection.js';
import { apiKeyKeys } from './keys.js';
import { KEY_BY_ID, KEY_INSERT, KEY_LIST, KEY_REVOKE } from './scripts/api-keys.js';
import { records, strings } from './scripts/script.js';

/**
 * {@link ApiKeyStore} on Redis. `findByHash` (every authenticated request) is one HGET, O(1);
 * `insert` and `list` are one script each; `revoke` is two round trips (read the key's
 * workspace, then a script that deletes it only if it is unchanged) because the workspace index
 * key depends on the stored record. Options as for `RedisStorage`.
 * @throws ParleyError `service_unavailable` from every method when Redis cannot be reached.
 */
export class RedisApiKeyStore implements ApiKeyStore {
  /** The ioredis client in use. */
  readonly client: RedisClient;
  private readonly runner: RedisRunner;
  private readonly owned: boolean;

  constructor(options: RedisAdapterOptions) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const { client, owned } = connect(options, timeoutMs);
    this.client = client;
    this.owned = owned;
    this.runner = new RedisRunner(client, timeoutMs, options.prefix);
  }

  private get keys() {
    return apiKeyKeys(this.runner.prefix);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const raw = await this.runner.run((client) => client.hget(this.keys.byHash, hash));
    return raw === null ? null : (JSON.parse(raw) as ApiKeyRecord);
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    const keys = this.keys;
    const createdAt = Date.parse(record.createdAt);
    await this.runner.script(
      KEY_INSERT,
      [keys.byHash, keys.byId, keys.all, keys.byWorkspace(record.workspaceId)],
      [record.hash, record.keyId, JSON.stringify(record), Number.isFinite(createdAt) ? createdAt : 0],
    );
  }

  /** Ordered by `createdAt` (then key id); O(keys listed). */
  async list(workspaceId?: string): Promise<ApiKeyRecord[]> {
    const keys = this.keys;
    const index = workspaceId === undefined ? keys.all : keys.byWorkspace(workspaceId);
    return records<ApiKeyRecord>(strings(await this.runner.script(KEY_LIST, [index, keys.byId, keys.byHash])));
  }

  async revoke(keyId: string): Promise<boolean> {
    const keys = this.keys;
    const raw = await this.runner.script(KEY_BY_ID, [keys.byId, keys.byHash], [keyId]);
    if (typeof raw !== 'string') return false;
    const record = JSON.parse(raw) as ApiKeyRecord;
    const reply = await this.runner.script(
      KEY_REVOKE,
      [keys.byHash, keys.byId, keys.all, keys.byWorkspace(record.workspaceId)],
      [keyId, record.hash],
    );
    return reply === 1;
  }

  /** Closes the client if this store created it; a client passed in stays open. */
  close(): Promise<void> {
    return closeClient(this.client, this.owned);
  }
}
