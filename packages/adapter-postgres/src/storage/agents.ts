/** @module Agents on PostgreSQL: each write, its preconditions and its event in one statement. */
import type { Agent, DomainEvent } from '@parley/core';
import { traceContextOf, type AgentStore, type WorkspaceScope } from '@parley/core/adapter';
import { applyChange, deleteRecord, type RecordTable } from './changes.js';
import { eventJson, offsetPage, pageItems, recordEvent, type StoreContext } from './context.js';
import { recordReader } from './record-reader.js';

const AGENTS: RecordTable = { name: 'agents', columns: { status: 'status' } };

/** `storage.agents` on PostgreSQL. */
export function agentStore(context: StoreContext): AgentStore {
  const { sql, s, recorded } = context;
  const writeWithEvent = async (text: string, params: unknown[], scope: WorkspaceScope, event: DomainEvent) => {
    const n = params.length;
    await sql.query(
      `WITH rec AS (${text}), ${recordEvent(s, 'rec', { ws: '$1', id: `$${n + 1}`, type: `$${n + 2}`, event: `$${n + 3}`, trace: `$${n + 4}` })} SELECT 1`,
      [...params, event.id, event.type, eventJson(scope.workspaceId, event), traceContextOf(scope) ?? null],
    );
    recorded();
  };
  return {
    insert: (scope, agent, { event }) =>
      writeWithEvent(
        `INSERT INTO ${s}.agents (workspace_id, id, status, data) VALUES ($1, $2, $3, $4::jsonb) RETURNING 1`,
        [scope.workspaceId, agent.id, agent.status, JSON.stringify(agent)],
        scope,
        event,
      ),

    get: recordReader<Agent>(context, AGENTS),

    // Page-numbered (the API's page/limit): OFFSET over the (workspace_id[, status], id) index.
    list: async ({ workspaceId }, { offset, limit, status }) => {
      const filter = `workspace_id = $1 AND ($2::text IS NULL OR status = $2)`;
      const [row] = await sql.query<{ total: number; items: [Agent, number][] }>(
        `SELECT (SELECT count(*)::int FROM ${s}.agents WHERE ${filter}) AS total,
                (SELECT ${pageItems} FROM
                  (SELECT id, data, version FROM ${s}.agents WHERE ${filter} ORDER BY id DESC OFFSET $3 LIMIT $4) page) AS items`,
        [workspaceId, status ?? null, offset, limit],
      );
      return offsetPage(row);
    },

    update: (scope, id, change) => applyChange<Agent>(context, AGENTS, scope, id, change),

    // The agent's conversations (and, by cascade, their messages) go first, in a CTE the delete
    // waits on: record locks are taken before the event's counter lock, as in every other write.
    delete: (scope, id, { event, ifVersion }) =>
      deleteRecord<Agent>(context, AGENTS, scope, id, {
        event,
        ifVersion,
        before: `convs AS (DELETE FROM ${s}.conversations WHERE workspace_id = $1 AND agent_id = $2 AND EXISTS (SELECT 1 FROM ok) RETURNING 1),
         before_done AS MATERIALIZED (SELECT 1 FROM ok WHERE (SELECT count(*) FROM convs) >= 0)`,
      }),
  };
}
