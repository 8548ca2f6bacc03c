/**
 * @module A declarative change (ports/storage.ts `Change`) and a conditional delete as ONE SQL
 * statement each: lock the row, check the version and conditions on it, merge, bump the version,
 * record the event from the row as stored, and answer the row as stored when a condition failed.
 *
 * Shape of an update (a data-modifying CTE, one round trip):
 *
 *   cur  AS MATERIALIZED (SELECT data, version … FOR NO KEY UPDATE)  -- the row as stored now
 *   next AS (SELECT merged data, version + 1 FROM cur WHERE version = ANY($v) AND <conditions>)
 *   upd  AS (UPDATE t SET data = next.data, version = next.version, <columns> FROM next … RETURNING)
 *   <the event and its outbox row from upd>                          -- see recordEvent
 *   SELECT upd's row (applied), else cur's (unmet), else nothing (null)
 *
 * Locking `cur` first (rather than `UPDATE … WHERE version = $v` alone) makes the row answered
 * on `unmet` the one stored now, not the statement's snapshot: under READ COMMITTED a row lock
 * waits for a concurrent writer and then reads its committed row. Concurrent changes of one row
 * queue on that lock; none is retried or lost.
 */
import type { DomainEvent } from '@parley/core';
import {
  traceContextOf,
  withVersion,
  type WorkspaceScope,
  type Change,
  type Condition,
  type DeleteOptions,
  type EventDraft,
  type WriteResult,
} from '@parley/core/adapter';
import { eventJson, HIDDEN_FIELDS_SQL, recordEvent, type StoreContext } from './context.js';

/** The later of a stored ISO timestamp (jsonb) and `$param`, as jsonb: ISO 8601 UTC strings sort bytewise. */
export const later = (stored: string, param: string) =>
  `CASE WHEN ${stored} IS NULL OR ${stored} = 'null'::jsonb OR (${stored} #>> '{}') COLLATE "C" < ${param}::text THEN to_jsonb(${param}::text) ELSE ${stored} END`;

/** A table whose rows hold a record (`data` jsonb) with a `version`, keyed by (workspace_id, id). */
export interface RecordTable {
  /** Unqualified table name. */
  name: string;
  /** Columns kept beside `data`, each a copy of one top-level text field (column → field). */
  columns?: Record<string, string>;
  /**
   * The record's jsonb as read from the row `alias`, where columns hold fields that are newer than
   * `data`'s (a conversation's `last_message_at`); `data` itself when absent. See {@link recordData}.
   */
  data?: (alias: string) => string;
}

/** SQL for the record of `table` in the row `alias`, as readers see it. */
export const recordData = (table: RecordTable, alias: string): string => table.data?.(alias) ?? `${alias}.data`;

/** A row answered by the statements here: the record's JSON and version, and whether it was written. */
type ChangeRow<T> = {
  data: T;
  version: number;
  applied: boolean;
};

/** `data` carrying `version` (ports/storage.ts "Versions"). */
export const versioned = <T extends object>(data: T, version: number | string): T => withVersion(data, Number(version));

/** SQL deciding `conditions` on `alias.data`, adding their parameters to `params`. */
function conditionsSql<T>(alias: string, conditions: readonly Condition<T>[] | undefined, params: unknown[]): string {
  const parts = (conditions ?? []).map((condition) => {
    params.push(condition.field);
    const field = `${alias}.data->$${params.length}::text`;
    if ('equals' in condition) {
      // A missing field counts as null; jsonb equality compares type and value.
      params.push(JSON.stringify(condition.equals));
      return `coalesce(${field}, 'null'::jsonb) = $${params.length}::jsonb`;
    }
    params.push(condition.before);
    return `(jsonb_typeof(${field}) = 'string' AND (${field} #>> '{}') COLLATE "C" < $${params.length}::text)`;
  });
  return parts.length ? parts.join(' AND ') : 'true';
}

/** The event stored for `draft` with `data` from the SQL expression `dataSql` (the record's jsonb, hidden fields left out), key order kept. */
function eventJsonSql(draftParam: string, dataSql: string): string {
  return `(left(${draftParam}::text, -1) || ',"data":' || (${dataSql} - ${HIDDEN_FIELDS_SQL})::text || '}')::json`;
}

/** Whether a change's event is complete (it carries its own `data`, recorded as given) rather than a draft. */
const isComplete = (event: EventDraft | DomainEvent): event is DomainEvent => 'data' in event;

/** The draft's JSON (as the store keeps events: with the workspace id), without `data`. */
const draftJson = (workspaceId: string, event: EventDraft) => JSON.stringify({ ...event, workspaceId });

/**
 * Applies `change` to the record `id` of `table` in one statement; see the module comment.
 * `null`: no such record.
 */
export async function applyChange<T extends object>(
  { sql, s, recorded }: StoreContext,
  table: RecordTable,
  scope: WorkspaceScope,
  id: string,
  change: Change<T>,
): Promise<WriteResult<T> | null> {
  const { workspaceId } = scope;
  const { id: _id, ...set } = (change.set ?? {}) as Record<string, unknown>;
  const params: unknown[] = [
    workspaceId,
    id,
    JSON.stringify(set),
    change.touch ?? null,
    change.keepVersion ? 0 : 1,
    change.ifVersion ?? null,
  ];
  const where = conditionsSql('cur', change.where, params);
  const merged = `cur.data || $3::jsonb`;
  const touched = `(${merged}) || CASE WHEN $4::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('updatedAt', ${later(`(${merged})->'updatedAt'`, '$4')}) END`;
  const columns = Object.entries(table.columns ?? {})
    .map(([column, field]) => `, ${column} = next.data->>'${field}'`)
    .join('');
  let event = '';
  if (change.event) {
    const given = change.event;
    const complete = isComplete(given);
    params.push(
      given.id,
      given.type,
      isComplete(given) ? eventJson(workspaceId, given) : draftJson(workspaceId, given),
      traceContextOf(scope) ?? null,
    );
    const n = params.length;
    event = `, ${recordEvent(s, 'upd', { ws: '$1', id: `$${n - 3}`, type: `$${n - 2}`, event: complete ? `$${n - 1}` : eventJsonSql(`$${n - 1}`, '(SELECT data FROM upd)'), trace: `$${n}` })}`;
  }
  const t = `${s}.${table.name}`;
  const [row] = await sql.query<ChangeRow<T>>(
    `WITH cur AS MATERIALIZED (SELECT ${recordData(table, 'c')} AS data, version FROM ${t} AS c WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE),
     next AS (SELECT ${touched} AS data, cur.version + $5::int AS version FROM cur WHERE ($6::int[] IS NULL OR cur.version = ANY($6::int[])) AND ${where}),
     upd AS (
       UPDATE ${t} AS t SET data = next.data, version = next.version${columns}
       FROM next WHERE t.workspace_id = $1 AND t.id = $2 RETURNING ${recordData(table, 't')} AS data, t.version
     )${event}
     SELECT data, version, true AS applied FROM upd
     UNION ALL SELECT data, version, false FROM cur WHERE NOT EXISTS (SELECT 1 FROM upd)`,
    params,
  );
  if (!row) return null;
  if (row.applied && change.event) recorded();
  return { outcome: row.applied ? 'applied' : 'unmet', record: versioned(row.data, row.version) };
}

/**
 * Deletes the record `id` of `table` in one statement if `conditions` hold: `applied` with the
 * record as it was, `unmet` with it as stored, `null` when there is none. `before` adds CTEs
 * (given the CTE `ok`, which yields the row when the delete goes ahead) that must run before the
 * row goes, e.g. deleting dependants in lock order; `event` records `{ ...event, data }`.
 */
export async function deleteRecord<T extends object>(
  { sql, s, recorded }: StoreContext,
  table: RecordTable,
  scope: WorkspaceScope,
  id: string,
  options: DeleteOptions & { before?: string } = {},
): Promise<WriteResult<T> | null> {
  const { workspaceId } = scope;
  const params: unknown[] = [workspaceId, id, options.ifVersion ?? null];
  let event = '';
  if (options.event) {
    params.push(
      options.event.id,
      options.event.type,
      draftJson(workspaceId, options.event),
      traceContextOf(scope) ?? null,
    );
    event = `, ${recordEvent(s, 'del', { ws: '$1', id: '$4', type: '$5', event: eventJsonSql('$6', '(SELECT data FROM del)'), trace: '$7' })}`;
  }
  const t = `${s}.${table.name}`;
  const [row] = await sql.query<ChangeRow<T>>(
    `WITH cur AS MATERIALIZED (SELECT ${recordData(table, 'c')} AS data, version FROM ${t} AS c WHERE workspace_id = $1 AND id = $2 FOR UPDATE),
     ok AS MATERIALIZED (SELECT 1 FROM cur WHERE $3::int[] IS NULL OR cur.version = ANY($3::int[])),
     ${options.before ? `${options.before},` : ''}
     del AS (DELETE FROM ${t} AS d WHERE workspace_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM ${options.before ? 'before_done' : 'ok'}) RETURNING ${recordData(table, 'd')} AS data, d.version)${event}
     SELECT data, version, EXISTS (SELECT 1 FROM del) AS applied FROM cur`,
    params,
  );
  if (!row) return null;
  if (row.applied && options.event) recorded();
  return { outcome: row.applied ? 'applied' : 'unmet', record: versioned(row.data, row.version) };
}
