/** @module The API key port: hashed keys looked up by hash. */
import type { ApiKeyRecord } from '../types.js';

/**
 * Where API keys live. Only SHA-256 hashes (lowercase hex) are stored; the raw key is never
 * persisted. Lookups are by hash, so they are global rather than per workspace.
 */
export interface ApiKeyStore {
  /** The key whose hash is `hash`, or `null`. */
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Stores a key; its `hash` and `keyId` are new. */
  insert(record: ApiKeyRecord): Promise<void>;
  /** Every key, or those of one workspace; ordered by `createdAt`. */
  list(workspaceId?: string): Promise<ApiKeyRecord[]>;
  /** Deletes the key with this `keyId`; `false` when there is none. */
  revoke(keyId: string): Promise<boolean>;
}
