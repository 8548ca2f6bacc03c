/** @module API keys on PostgreSQL: SHA-256 hashes looked up by primary key; an upsert is one statement. */
import type { ApiKeyRecord } from '@parley/core';
import type { ApiKeyStore, ApiKeyUpsert } from '@parley/core/adapter';
import { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
import { againOnDeadlock } from './faults.js';
import type { Sql } from './sql.js';

/** Settings of {@link PostgresApiKeyStore}. */
export interface PostgresApiKeyStoreOptions {
  sql: Sql;
  /** Default `parley`. */
  schema?: string;
}

/** {@link ApiKeyStore} on PostgreSQL or PGlite: only hashes are stored, never a raw key. */
export class PostgresApiKeyStore implements ApiKeyStore {
  private readonly sql: Sql;
  private readonly s: string;

  constructor(options: PostgresApiKeyStoreOptions) {
    this.sql = options.sql;
    this.s = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return (
      (await this.sql.query<{ data: ApiKeyRecord }>(`SELECT data FROM ${this.s}.api_keys WHERE hash = $1`, [hash]))[0]
        ?.data ?? null
    );
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    await this.sql.query(
      `INSERT INTO ${this.s}.api_keys (hash, key_id, workspace_id, created_at, data) VALUES ($1, $2, $3, $4, $5::jsonb)`,
      [record.hash, record.keyId, record.workspaceId, record.createdAt, JSON.stringify(record)],
    );
  }

  /**
   * One statement decides: insert (`created`), or replace the grant keeping `keyId` and
   * `createdAt` when it differs (`updated`, told apart by `xmax`), or touch nothing. Only in that
   * last case is the stored key read again, by a second statement.
   */
  async upsert(record: ApiKeyRecord): Promise<ApiKeyUpsert> {
    const grant = `- 'keyId' - 'createdAt' - 'hash'`;
    // Concurrent upserts of one key can deadlock inside ON CONFLICT (its hash and its key id are
    // both unique); the statement was rolled back as a whole, so it runs again.
    const upsert = () =>
      this.sql.query<{ data: ApiKeyRecord; created: boolean }>(
        `INSERT INTO ${this.s}.api_keys AS k (hash, key_id, workspace_id, created_at, data) VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (hash) DO UPDATE SET workspace_id = EXCLUDED.workspace_id,
         data = EXCLUDED.data || jsonb_build_object('keyId', k.key_id, 'createdAt', k.created_at)
       WHERE (k.data ${grant}) IS DISTINCT FROM (EXCLUDED.data ${grant})
       RETURNING data, xmax = 0 AS created`,
        [record.hash, record.keyId, record.workspaceId, record.createdAt, JSON.stringify(record)],
      );
    const [row] = await againOnDeadlock(upsert, 3);
    if (row) return { outcome: row.created ? 'created' : 'updated', record: row.data };
    return { outcome: 'unchanged', record: (await this.findByHash(record.hash))! };
  }

  async list(workspaceId?: string): Promise<ApiKeyRecord[]> {
    const rows = await this.sql.query<{ data: ApiKeyRecord }>(
      `SELECT data FROM ${this.s}.api_keys WHERE $1::text IS NULL OR workspace_id = $1 ORDER BY created_at, key_id`,
      [workspaceId ?? null],
    );
    return rows.map((row) => row.data);
  }

  async revoke(keyId: string): Promise<boolean> {
    return (await this.sql.query(`DELETE FROM ${this.s}.api_keys WHERE key_id = $1 RETURNING 1`, [keyId])).length > 0;
  }
}
