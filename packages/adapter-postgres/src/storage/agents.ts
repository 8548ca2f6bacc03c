/** @module Agents on PostgreSQL: each write and its event in one statement; updates and deletes under a row lock. */
import type { Agent, AgentStore, DomainEvent } from '@parley/core';
import { eventJson, offsetPage, recordEvent, type StoreContext } from './context.js';

/** `storage.agents` on PostgreSQL. */
export function agentStore({ sql, s, recorded }: StoreContext): AgentStore {
  const writeWithEvent = async (run: { query: StoreContext['sql']['query'] }, text: string, params: unknown[], workspaceId: string, event: DomainEvent) => {
    const n = params.length;
    await run.query(`WITH rec AS (${text}), ${recordEvent(s, 'rec', { ws: '$1', id: `$${n + 1}`, type: `$${n + 2}`, event: `$${n + 3}` })} SELECT 1`, [
      ...params,
      event.id,
      event.type,
      eventJson(workspaceId, event),
    ]);
    recorded();
  };
  return {
    insert: (workspaceId, agent, event) =>
      writeWithEvent(sql, `INSERT INTO ${s}.agents (workspace_id, id, status, data) VALUES ($1, $2, $3, $4::jsonb) RETURNING 1`, [workspaceId, agent.id, agent.status, JSON.stringify(agent)], workspaceId, event),

    get: async (workspaceId, id) => (await sql.query<{ data: Agent }>(`SELECT data FROM ${s}.agents WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]))[0]?.data ?? null,

    // Page-numbered (the API's page/limit): OFFSET over the (workspace_id[, status], id) index.
    list: async (workspaceId, { offset, limit, status }) => {
      const filter = `workspace_id = $1 AND ($2::text IS NULL OR status = $2)`;
      const [row] = await sql.query<{ total: number; items: Agent[] }>(
        `SELECT (SELECT count(*)::int FROM ${s}.agents WHERE ${filter}) AS total,
                (SELECT coalesce(jsonb_agg(data ORDER BY id DESC), '[]') FROM
                  (SELECT id, data FROM ${s}.agents WHERE ${filter} ORDER BY id DESC OFFSET $3 LIMIT $4) page) AS items`,
        [workspaceId, status ?? null, offset, limit],
      );
      return offsetPage(row);
    },

    update: (workspaceId, id, update) =>
      sql.transaction(async (tx) => {
        // NO KEY UPDATE: conflicts with a conversation insert's FOR SHARE (its "agent active" check).
        const [row] = await tx.query<{ data: Agent }>(`SELECT data FROM ${s}.agents WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`, [workspaceId, id]);
        if (!row) return null;
        const change = update(row.data);
        if (!change) return row.data;
        const record = { ...change.record, id };
        const text = `UPDATE ${s}.agents SET status = $3, data = $4::jsonb WHERE workspace_id = $1 AND id = $2 RETURNING 1`;
        const params = [workspaceId, id, record.status, JSON.stringify(record)];
        if (change.event) await writeWithEvent(tx, text, params, workspaceId, change.event);
        else await tx.query(text, params);
        return record;
      }),

    delete: (workspaceId, id, event) =>
      sql.transaction(async (tx) => {
        // FOR UPDATE blocks conversation inserts for this agent (FOR SHARE) until the delete commits.
        const [row] = await tx.query<{ data: Agent }>(`SELECT data FROM ${s}.agents WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, [workspaceId, id]);
        if (!row) return null;
        const deleted = event(row.data);
        // Conversations (and, by cascade, their messages) first, in a statement of their own: the
        // event's counter lock is then taken after every record lock, as in every other write.
        await tx.query(`DELETE FROM ${s}.conversations WHERE workspace_id = $1 AND agent_id = $2`, [workspaceId, id]);
        await writeWithEvent(tx, `DELETE FROM ${s}.agents WHERE workspace_id = $1 AND id = $2 RETURNING 1`, [workspaceId, id], workspaceId, deleted);
        return row.data;
      }),
  };
}
