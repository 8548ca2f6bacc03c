/**
 * @module Each webhook endpoint's deliveries log on PostgreSQL, kept for the event retention.
 * Pages are keyset reads of the primary key (workspace_id, endpoint_id, id), newest first.
 */
import type { DeliveryAttempt } from '@parley/core';
import { isSuccess, type DeliveryStore } from '@parley/core/adapter';
import { Batcher } from '../batch.js';
import { isUnavailable } from '../faults.js';
import { retained, type StoreContext } from './context.js';

/** SQLSTATE foreign_key_violation: the endpoint was deleted meanwhile. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * One attempt as inserted, taken when `record` is called: workspace, endpoint, attempt and event
 * ids, whether it succeeded (a 2xx), and the entry's JSON.
 */
type Row = [workspaceId: string, endpointId: string, id: string, eventId: string, succeeded: boolean, data: string];

/** `storage.deliveries` on PostgreSQL. */
export function deliveryStore({ sql, s, retentionMs }: StoreContext): DeliveryStore {
  const live = retained('recorded_at', '$3');
  // Inserts the attempts whose endpoint still exists; an attempt recorded twice (same id) is kept once.
  const insert = async (rows: readonly Row[]): Promise<void> => {
    await sql.query(
      `INSERT INTO ${s}.deliveries (workspace_id, endpoint_id, id, event_id, succeeded, data)
       SELECT a.workspace_id, a.endpoint_id, a.id, a.event_id, a.succeeded, a.data::json
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[])
         AS a(workspace_id, endpoint_id, id, event_id, succeeded, data)
       WHERE EXISTS (SELECT 1 FROM ${s}.webhook_endpoints e WHERE e.workspace_id = a.workspace_id AND e.id = a.endpoint_id)
       ON CONFLICT DO NOTHING`,
      // One array per column, for unnest.
      [0, 1, 2, 3, 4, 5].map((column) => rows.map((row) => row[column])),
    );
  };
  // An endpoint deleted after the EXISTS check read it: its attempt is dropped with it.
  const insertOne = (row: Row): Promise<void> =>
    insert([row]).catch((error: unknown) => {
      if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error;
    });
  // The attempts recorded while one INSERT is in flight go out in the next (group commit: a
  // worker with many deliveries in flight commits once for many). When a batch fails for anything
  // but the database's unavailability, each of its attempts is tried alone, so one endpoint
  // deleted meanwhile, or one bad entry, fails only its own call (its error is its result).
  const records = new Batcher<Row, { error: unknown } | null>(
    async (rows) => {
      try {
        await (rows.length === 1 ? insertOne(rows[0]!) : insert(rows));
        return rows.map(() => null);
      } catch (error) {
        if (rows.length === 1 || isUnavailable(error)) throw error;
        const settled = await Promise.allSettled(rows.map(insertOne));
        return settled.map((outcome) => (outcome.status === 'rejected' ? { error: outcome.reason } : null));
      }
    },
    { failsWaiting: isUnavailable },
  );
  return {
    record: async ({ workspaceId }, attempt) => {
      const { endpointId, id, eventId, status } = attempt;
      const failed = await records.add([
        workspaceId,
        endpointId,
        id,
        eventId,
        isSuccess(status),
        JSON.stringify(attempt),
      ]);
      if (failed) throw failed.error;
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
