/** @module API keys in this process's memory (keys from configuration, tests). */
import type { ApiKeyRecord } from '@parley/core';
import { regrantApiKey, sameApiKeyGrant, type ApiKeyStore, type ApiKeyUpsert } from '@parley/core/adapter';

/** {@link ApiKeyStore} in memory, indexed by hash. Lost when the process exits. */
export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly byHash = new Map<string, ApiKeyRecord>();

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const record = this.byHash.get(hash);
    // A record's only nested value is its scopes array: a spread and one array copy are a full
    // copy, at a fraction of structuredClone's cost.
    return record ? { ...record, scopes: [...record.scopes] } : null;
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    this.byHash.set(record.hash, structuredClone(record));
  }

  /** Compare and write happen in one synchronous section, so concurrent upserts cannot interleave. */
  async upsert(record: ApiKeyRecord): Promise<ApiKeyUpsert> {
    const existing = this.byHash.get(record.hash);
    if (existing === undefined) {
      this.byHash.set(record.hash, structuredClone(record));
      return { outcome: 'created', record: structuredClone(record) };
    }
    const wanted = regrantApiKey(existing, record);
    if (sameApiKeyGrant(existing, wanted)) return { outcome: 'unchanged', record: structuredClone(existing) };
    this.byHash.set(record.hash, wanted);
    return { outcome: 'updated', record: structuredClone(wanted) };
  }

  async list(workspaceId?: string): Promise<ApiKeyRecord[]> {
    return [...this.byHash.values()]
      .filter((record) => workspaceId === undefined || record.workspaceId === workspaceId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((record) => structuredClone(record));
  }

  async revoke(keyId: string): Promise<boolean> {
    for (const [hash, record] of this.byHash) {
      if (record.keyId === keyId) return this.byHash.delete(hash);
    }
    return false;
  }
}
