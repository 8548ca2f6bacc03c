/** @module Webhook endpoints on PostgreSQL; their deliveries log goes with them (ON DELETE CASCADE). */
import type { WebhookEndpointRecord, WebhookEndpointStore } from '@parley/core';
import { offsetPage, type StoreContext } from './context.js';

/** `storage.webhookEndpoints` on PostgreSQL. */
export function webhookEndpointStore({ sql, s }: StoreContext): WebhookEndpointStore {
  type Row = { data: WebhookEndpointRecord };
  return {
    insert: async (workspaceId, endpoint) => {
      await sql.query(`INSERT INTO ${s}.webhook_endpoints (workspace_id, id, data) VALUES ($1, $2, $3::jsonb)`, [workspaceId, endpoint.id, JSON.stringify(endpoint)]);
    },
    get: async (workspaceId, id) => (await sql.query<Row>(`SELECT data FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]))[0]?.data ?? null,
    list: async (workspaceId, { offset, limit }) => {
      const [row] = await sql.query<{ total: number; items: WebhookEndpointRecord[] }>(
        `SELECT (SELECT count(*)::int FROM ${s}.webhook_endpoints WHERE workspace_id = $1) AS total,
                (SELECT coalesce(jsonb_agg(data ORDER BY id DESC), '[]') FROM
                  (SELECT id, data FROM ${s}.webhook_endpoints WHERE workspace_id = $1 ORDER BY id DESC OFFSET $2 LIMIT $3) page) AS items`,
        [workspaceId, offset, limit],
      );
      return offsetPage(row);
    },
    // A workspace has a handful of endpoints: filtering them in the database is one short scan.
    // `*` subscribes to every type, present and future.
    subscribed: async (workspaceId, type) =>
      (await sql.query<Row>(`SELECT data FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND data->'enabled' = 'true'::jsonb AND data->'events' ?| ARRAY[$2, '*']`, [workspaceId, type])).map(
        (row) => row.data,
      ),
    update: (workspaceId, id, update) =>
      sql.transaction(async (tx) => {
        const [row] = await tx.query<Row>(`SELECT data FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`, [workspaceId, id]);
        if (!row) return null;
        const change = update(row.data);
        if (!change) return row.data;
        // Endpoints emit no events: a change's `event` is ignored (ports/storage.ts).
        const record = { ...change.record, id };
        await tx.query(`UPDATE ${s}.webhook_endpoints SET data = $3::jsonb WHERE workspace_id = $1 AND id = $2`, [workspaceId, id, JSON.stringify(record)]);
        return record;
      }),
    delete: (workspaceId, id, check) =>
      sql.transaction(async (tx) => {
        const [row] = await tx.query<Row>(`SELECT data FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, [workspaceId, id]);
        if (!row) return false;
        check?.(row.data);
        await tx.query(`DELETE FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
        return true;
      }),
  };
}
