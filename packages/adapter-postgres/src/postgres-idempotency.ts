/**
 * @module Idempotency keys on PostgreSQL: a claim is one upsert that takes over only an expired
 * row, and reports the row as it stands, so concurrent claims in any process get one winner.
 */
import { randomUUID } from 'node:crypto';
import type {
  IdempotencyClaim,
  IdempotencyCompletion,
  IdempotencyRelease,
  IdempotencyRequest,
  IdempotencyStore,
  IdempotentResponse,
  WorkspaceScope,
} from '@parley/core/adapter';
import { DEFAULT_SCHEMA, quoteSchema } from './schema.js';
import type { Sql } from './sql.js';

/** Settings of {@link PostgresIdempotencyStore}. */
export interface PostgresIdempotencyStoreOptions {
  sql: Sql;
  /** Default `parley`. */
  schema?: string;
}

const ms = (param: string) => `clock_timestamp() + ${param}::bigint * interval '1 millisecond'`;

/** {@link IdempotencyStore} on PostgreSQL or PGlite; expired rows are deleted by the storage sweep. */
export class PostgresIdempotencyStore implements IdempotencyStore {
  private readonly sql: Sql;
  private readonly s: string;

  constructor(options: PostgresIdempotencyStoreOptions) {
    this.sql = options.sql;
    this.s = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
  }

  async claim(
    { workspaceId }: WorkspaceScope,
    { key, fingerprint, leaseMs }: IdempotencyRequest,
  ): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const expired = `i.expires_at <= clock_timestamp()`;
    const [row] = await this.sql.query<{ token: string; fingerprint: string; response: IdempotentResponse | null }>(
      `INSERT INTO ${this.s}.idempotency_keys AS i (workspace_id, key, fingerprint, token, expires_at) VALUES ($1, $2, $3, $4, ${ms('$5')})
       ON CONFLICT (workspace_id, key) DO UPDATE SET
         fingerprint = CASE WHEN ${expired} THEN EXCLUDED.fingerprint ELSE i.fingerprint END,
         token = CASE WHEN ${expired} THEN EXCLUDED.token ELSE i.token END,
         response = CASE WHEN ${expired} THEN NULL ELSE i.response END,
         expires_at = CASE WHEN ${expired} THEN EXCLUDED.expires_at ELSE i.expires_at END
       RETURNING token, fingerprint, response`,
      [workspaceId, key, fingerprint, token, Math.ceil(leaseMs)],
    );
    if (row!.token === token) return { outcome: 'claimed', token };
    if (row!.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    return row!.response ? { outcome: 'replay', response: row!.response } : { outcome: 'in_progress' };
  }

  async complete(
    { workspaceId }: WorkspaceScope,
    { key, token, response, ttlMs }: IdempotencyCompletion,
  ): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE ${this.s}.idempotency_keys SET response = $4::jsonb, expires_at = ${ms('$5')}
       WHERE workspace_id = $1 AND key = $2 AND token = $3 AND expires_at > clock_timestamp() RETURNING 1`,
      [workspaceId, key, token, JSON.stringify(response), Math.ceil(ttlMs)],
    );
    return rows.length > 0;
  }

  async release({ workspaceId }: WorkspaceScope, { key, token }: IdempotencyRelease): Promise<boolean> {
    const rows = await this.sql.query(
      `DELETE FROM ${this.s}.idempotency_keys WHERE workspace_id = $1 AND key = $2 AND token = $3 AND expires_at > clock_timestamp() RETURNING 1`,
      [workspaceId, key, token],
    );
    return rows.length > 0;
  }
}
