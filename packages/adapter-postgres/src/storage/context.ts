/** @module What every PostgreSQL store shares: the connection, the schema and the event-recording CTEs. */
import type { DomainEvent } from '@parley/core';
import { HIDDEN_FIELDS, withoutHiddenFields, withVersion } from '@parley/core/adapter';
import type { Sql } from '../sql.js';

/** Settings and connection of one `PostgresStorage`, handed to each of its stores. */
export interface StoreContext {
  sql: Sql;
  /** The quoted schema, e.g. `"parley"`; table names are written `${s}.agents`. */
  s: string;
  /** How long events and delivery attempts are kept, in ms. */
  retentionMs: number;
  /** How long an outbox batch is held by its taker, in ms. */
  leaseMs: number;
  /** Tells waiting outbox takers of this process that an event was recorded. */
  recorded(): void;
}

/** SQL for "recorded within the retention", given the parameter holding the retention in ms. */
export const retained = (column: string, param: string): string =>
  `${column} >= now() - ${param}::bigint * interval '1 millisecond'`;

/** The event as stored: its own JSON with the workspace it belongs to, its `data` without hidden fields. */
export function eventJson(workspaceId: string, event: DomainEvent): string {
  const data = event.data !== null && typeof event.data === 'object' ? withoutHiddenFields(event.data) : event.data;
  return JSON.stringify({ ...event, data, workspaceId });
}

/**
 * SQL removing the hidden fields (core's `HIDDEN_FIELDS`: an agent's tools secret, a paused reply's
 * answers) from a record's jsonb, for an event's `data`: `<record> - '{…}'::text[]`.
 */
export const HIDDEN_FIELDS_SQL = `'{${HIDDEN_FIELDS.join(',')}}'::text[]`;

/**
 * Common table expressions that record one event when the CTE `after` yielded a row: take the
 * workspace's next commit-order number (its event_counters row stays locked until commit, see
 * migrations/0001_init.sql), log the event, queue it in the outbox, make sure the workspace has an
 * outbox lease row. `p` names the parameters holding the workspace id, event id, type and JSON,
 * and the W3C trace context the write was made in (text, null for none; `traceContextOf`).
 * Every statement takes record locks before this counter lock, so writes never deadlock on it.
 */
export function recordEvent(
  s: string,
  after: string,
  p: { ws: string; id: string; type: string; event: string; trace: string },
): string {
  return `
  seq AS (
    INSERT INTO ${s}.event_counters AS c (workspace_id, last_seq) SELECT ${p.ws}::text, 1 FROM ${after}
    ON CONFLICT (workspace_id) DO UPDATE SET last_seq = c.last_seq + 1 RETURNING last_seq
  ),
  logged AS (
    INSERT INTO ${s}.events (workspace_id, seq, id, type, event)
    SELECT ${p.ws}::text, last_seq, ${p.id}::text, ${p.type}::text, ${p.event}::json FROM seq RETURNING seq
  ),
  queued AS (
    INSERT INTO ${s}.outbox (workspace_id, seq, trace_context) SELECT ${p.ws}::text, seq, ${p.trace}::text FROM logged RETURNING seq
  ),
  leases AS (INSERT INTO ${s}.outbox_leases (workspace_id) SELECT ${p.ws}::text FROM queued ON CONFLICT DO NOTHING)`;
}

/**
 * A page of a page-numbered list, from a row `{ total, items }`, items a jsonb array of
 * `[record, version]` pairs (`jsonb_build_array(data, version)`): versioned records.
 */
export function offsetPage<T extends object>(
  row: { total: number; items: [T, number][] } | undefined,
): { items: T[]; total: number } {
  return { items: (row?.items ?? []).map(([data, version]) => withVersion(data, version)), total: row?.total ?? 0 };
}

/** The select list of a page-numbered list's items (see {@link offsetPage}) over a subquery `page`. */
export const pageItems = `coalesce(jsonb_agg(jsonb_build_array(data, version) ORDER BY id DESC), '[]')`;
