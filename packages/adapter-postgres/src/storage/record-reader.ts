/** @module Reading one record by id, the reads of concurrent requests batched into one statement. */
import { Batcher } from '../batch.js';
import { isUnavailable } from '../faults.js';
import { recordData, versioned, type RecordTable } from './changes.js';
import type { StoreContext } from './context.js';
import type { WorkspaceScope } from '@parley/core';

/**
 * `get(scope, id)` of `table`: the versioned record or `null`. Reads made while the table's
 * previous read is in flight go out together (see `Batcher`): one statement joining the asked
 * (workspace_id, id) pairs to the primary key, however many requests asked.
 */
export function recordReader<T extends object>(
  { sql, s }: StoreContext,
  table: RecordTable,
): (scope: WorkspaceScope, id: string) => Promise<T | null> {
  const reads = new Batcher<[string, string], T | null>(
    async (keys) => {
      const rows = await sql.query<{ ord: number; data: T; version: number }>(
        `SELECT k.ord, ${recordData(table, 'r')} AS data, r.version FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(workspace_id, id, ord)
       JOIN ${s}.${table.name} r ON r.workspace_id = k.workspace_id AND r.id = k.id`,
        [keys.map(([workspaceId]) => workspaceId), keys.map(([, id]) => id)],
      );
      const records: Array<T | null> = keys.map(() => null);
      for (const row of rows) records[row.ord - 1] = versioned(row.data, row.version);
      return records;
    },
    { failsWaiting: isUnavailable },
  );
  // PostgreSQL text cannot hold NUL, so no record has such an id, and one in the batch would fail
  // the whole statement (22021) for every request in it.
  return ({ workspaceId }, id) =>
    workspaceId.includes('\0') || id.includes('\0') ? Promise.resolve(null) : reads.add([workspaceId, id]);
}
