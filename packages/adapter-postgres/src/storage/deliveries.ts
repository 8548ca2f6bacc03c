/**
 * @module Each webhook endpoint's deliveries log on PostgreSQL, kept for the event retention.
 * Pages are keyset reads of the primary key (workspace_id, endpoint_id, id), newest first.
 */
import type { DeliveryAttempt } from '@parley/core';
import type { DeliveryStore } from '@parley/core/adapter';
import { retained, type StoreContext } from './context.js';

/** SQLSTATE foreign_key_violation: the endpoint was deleted meanwhile. */
const FOREIGN_KEY_VIOLATION = '23503';

/** `storage.deliveries` on PostgreSQL. */
export function deliveryStore({ sql, s, retentionMs }: StoreContext): DeliveryStore {
  const live = retained('recorded_at', '$3');
  return {
    record: async ({ workspaceId }, attempt) => {
      const succeeded = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
      try {
        await sql.query(
          `INSERT INTO ${s}.deliveries (workspace_id, endpoint_id, id, event_id, succeeded, data)
           SELECT $1, $2, $3, $4, $5, $6::json WHERE EXISTS (SELECT 1 FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND id = $2)
           ON CONFLICT DO NOTHING`,
          [workspaceId, attempt.endpointId, attempt.id, attempt.eventId, succeeded, JSON.stringify(attempt)],
        );
      } catch (error) {
        if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error;
      }
    },
    get: async ({ workspaceId }, endpointId, id) =>
      (
        await sql.query<{ data: DeliveryAttempt }>(
          `SELECT data FROM ${s}.deliveries WHERE workspace_id = $1 AND endpoint_id = $2 AND ${live} AND id = $4`,
          [workspaceId, endpointId, retentionMs, id],
        )
      )[0]?.data ?? null,
    list: async ({ workspaceId }, endpointId, { before, limit, eventId }) => {
      const [row] = await sql.query<{ cursor: boolean; rows: DeliveryAttempt[] }>(
        `SELECT ($4::text IS NULL OR EXISTS (SELECT 1 FROM ${s}.deliveries WHERE workspace_id = $1 AND endpoint_id = $2 AND id = $4 AND ${live})) AS cursor,
                coalesce((SELECT json_agg(data ORDER BY id DESC) FROM (
                  SELECT id, data FROM ${s}.deliveries
                  WHERE workspace_id = $1 AND endpoint_id = $2 AND ${live} AND ($4::text IS NULL OR id < $4) AND ($5::text IS NULL OR event_id = $5)
                  ORDER BY id DESC LIMIT $6) page), '[]'::json) AS rows`,
        [workspaceId, endpointId, retentionMs, before ?? null, eventId ?? null, limit + 1],
      );
      if (!row?.cursor) return null;
      return { deliveries: row.rows.slice(0, limit), hasMore: row.rows.length > limit };
    },
    delivered: async ({ workspaceId }, endpointId, eventIds) => {
      const rows = await sql.query<{ event_id: string }>(
        `SELECT DISTINCT event_id FROM ${s}.deliveries WHERE workspace_id = $1 AND endpoint_id = $2 AND ${live} AND event_id = ANY($4::text[]) AND succeeded`,
        [workspaceId, endpointId, retentionMs, [...eventIds]],
      );
      return new Set(rows.map((row) => row.event_id));
    },
  };
}
