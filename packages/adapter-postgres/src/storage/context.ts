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

/** SQL for the retention's start (older records are past it), given the parameter holding the retention in ms. */
export const retentionStart = (param: string): string => `now() - ${param}::bigint * interval '1 millisecond'`;

/** SQL for "recorded within the retention", given the parameter holding the retention in ms. */
export const retained = (column: string, param: string): string => `${column} >= ${retentionStart(param)}`;

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
 * Common table expressions that record one event when the CTE `after` yielded a row: log the
 * event at its position (the transaction's id and the next `events_seq`, both column defaults; see
 * migrations/0011_event_order.sql), queue it in the outbox, make sure the workspace has an outbox
 * lease row. No lock is taken beyond the rows written, so writes of one workspace never wait for
 * each other here. `p` names the parameters holding the workspace id, event id, type and JSON, and
 * the W3C trace context the write was made in (text, null for none; `traceContextOf`). The CTE
 * `queued` yields one row once the event is recorded.
 */
export function recordEvent(
  s: string,
  after: string,
  p: { ws: string; id: string; type: string; event: string; trace: string },
): string {
  return `
  logged AS (
    INSERT INTO ${s}.events (workspace_id, id, type, event)
    SELECT ${p.ws}::text, ${p.id}::text, ${p.type}::text, ${p.event}::json FROM ${after} RETURNING xid, seq
  ),
  queued AS (
    INSERT INTO ${s}.outbox (workspace_id, xid, seq, trace_context) SELECT ${p.ws}::text, xid, seq, ${p.trace}::text FROM logged RETURNING seq
  ),
  leases AS (INSERT INTO ${s}.outbox_leases (workspace_id) SELECT ${p.ws}::text FROM queued ON CONFLICT DO NOTHING)`;
}

/**
 * A CTE `lk` holding a transaction-scoped advisory lock on the record `id` of `table` (SQL
 * expressions for the workspace id and id), for a message append to join before its `UPDATE` of
 * the conversation. A plain `UPDATE` gets its transaction id before it waits for the row; waiting
 * here instead, before it has one, the later of two appends to one conversation gets the later
 * id, so a conversation's message events are listed in the order they committed
 * (migrations/0011_event_order.sql). A batch of appends (`append_messages`, migrations 0013 and
 * 0015) takes the same lock, spelled out there: the two must agree.
 */
export const recordLock = (table: string, ws: string, id: string): string =>
  `lk AS MATERIALIZED (SELECT pg_advisory_xact_lock(hashtext('${table}'), hashtext(${ws} || '/' || ${id})))`;

/**
 * SQL for the stable bound of the event log (migrations/0011_event_order.sql): the oldest
 * transaction of this database still running as of the statement's snapshot, or the snapshot's
 * `xmax` when there is none. Readers pass only positions below it: no transaction below it can
 * still record an event. It is `pg_snapshot_xmin` without the transactions of other databases —
 * transaction ids are cluster-wide, and another database's long transaction (a test run's
 * migration, another application) would otherwise hold back this database's events. A running
 * transaction is left out only when `pg_stat_activity` shows it to a backend of another database
 * (xids compared modulo 2³², as `backend_xid` is 32-bit); one that ended meanwhile stays in, which
 * only lowers the bound.
 */
export const STABLE_XID = `coalesce(
  (SELECT min(running) FROM pg_snapshot_xip(pg_current_snapshot()) AS running
   WHERE running::text::bigint % 4294967296 NOT IN (
     SELECT backend_xid::text::bigint FROM pg_stat_activity
     WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database())),
  pg_snapshot_xmax(pg_current_snapshot()))`;

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
