/** @module Webhook endpoints on PostgreSQL; their deliveries log goes with them (ON DELETE CASCADE). */
import type { WebhookEndpointRecord, WebhookEndpointStore } from '@parley/core/adapter';
import { applyChange, deleteRecord, versioned, type RecordTable } from './changes.js';
import { offsetPage, pageItems, type StoreContext } from './context.js';
import { recordReader } from './record-reader.js';

const ENDPOINTS: RecordTable = { name: 'webhook_endpoints' };

/** `storage.webhookEndpoints` on PostgreSQL. */
export function webhookEndpointStore(context: StoreContext): WebhookEndpointStore {
  const { sql, s } = context;
  type Row = { data: WebhookEndpointRecord; version: number };
  return {
    insert: async ({ workspaceId }, endpoint) => {
      await sql.query(`INSERT INTO ${s}.webhook_endpoints (workspace_id, id, data) VALUES ($1, $2, $3::jsonb)`, [
        workspaceId,
        endpoint.id,
        JSON.stringify(endpoint),
      ]);
    },
    get: recordReader<WebhookEndpointRecord>(context, ENDPOINTS),
    list: async ({ workspaceId }, { offset, limit }) => {
      const [row] = await sql.query<{ total: number; items: [WebhookEndpointRecord, number][] }>(
        `SELECT (SELECT count(*)::int FROM ${s}.webhook_endpoints WHERE workspace_id = $1) AS total,
                (SELECT ${pageItems} FROM
                  (SELECT id, data, version FROM ${s}.webhook_endpoints WHERE workspace_id = $1 ORDER BY id DESC OFFSET $2 LIMIT $3) page) AS items`,
        [workspaceId, offset, limit],
      );
      return offsetPage(row);
    },
    // A workspace has a handful of endpoints: filtering them in the database is one short scan.
    // `*` subscribes to every type, present and future.
    subscribed: async ({ workspaceId }, type) =>
      (
        await sql.query<Row>(
          `SELECT data, version FROM ${s}.webhook_endpoints WHERE workspace_id = $1 AND data->'enabled' = 'true'::jsonb AND data->'events' ?| ARRAY[$2, '*']`,
          [workspaceId, type],
        )
      ).map((row) => versioned(row.data, row.version)),
    // Endpoints emit no events (ports/storage.ts): a change carries none.
    update: (scope, id, change) =>
      applyChange<WebhookEndpointRecord>(context, ENDPOINTS, scope, id, { ...change, event: undefined }),
    delete: (scope, id, options) => deleteRecord<WebhookEndpointRecord>(context, ENDPOINTS, scope, id, options),
  };
}
