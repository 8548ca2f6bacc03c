/** @module The API key port: hashed keys looked up by hash. */
import type { ApiKeyRecord } from '../types.js';

/** What {@link ApiKeyStore.upsert} did, and the record now stored under the key's hash. */
export interface ApiKeyUpsert {
  outcome: 'created' | 'updated' | 'unchanged';
  record: ApiKeyRecord;
}

/**
 * Where API keys live. Only SHA-256 hashes (lowercase hex) are stored; the raw key is never
 * persisted. Lookups are by hash, so they are global rather than per workspace.
 */
export interface ApiKeyStore {
  /** The key whose hash is `hash`, or `null`. */
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Stores a key; its `hash` and `keyId` are new. */
  insert(record: ApiKeyRecord): Promise<void>;
  /**
   * Stores `record` unless a key with its hash exists (`created`). An existing key keeps its
   * `keyId` and `createdAt`; when its workspace, plan, scopes or `limitPerHour` differ from
   * `record`'s they are replaced in one atomic step, leaving the key in exactly one workspace's
   * listing (`updated`); otherwise nothing is written (`unchanged`). For keys provisioned from
   * configuration: several processes upserting the same raw key at once store it exactly once.
   */
  upsert(record: ApiKeyRecord): Promise<ApiKeyUpsert>;
  /** Every key, or those of one workspace; ordered by `createdAt`. */
  list(workspaceId?: string): Promise<ApiKeyRecord[]>;
  /** Deletes the key with this `keyId`; `false` when there is none. */
  revoke(keyId: string): Promise<boolean>;
}
