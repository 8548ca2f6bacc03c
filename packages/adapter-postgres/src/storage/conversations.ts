/** @module Conversations on PostgreSQL: insert checks its agent in the same statement; updates and deletes under a row lock. */
import type { Conversation, ConversationStore } from '@parley/core';
import { eventJson, offsetPage, recordEvent, type StoreContext } from './context.js';

/** `storage.conversations` on PostgreSQL. */
export function conversationStore({ sql, s, recorded }: StoreContext): ConversationStore {
  return {
    insert: async (workspaceId, conversation, event) => {
      // FOR SHARE on the agent: a concurrent deactivation or delete (which lock it for update)
      // either commits first and is seen here, or waits for this insert to commit.
      const [row] = await sql.query<{ agent_status: string | null; inserted: number }>(
        `WITH agent AS (SELECT status FROM ${s}.agents WHERE workspace_id = $1 AND id = $3 FOR SHARE),
         rec AS (
           INSERT INTO ${s}.conversations (workspace_id, id, agent_id, user_id, status, data)
           SELECT $1, $2, $3, $4, $5, $6::jsonb FROM agent WHERE agent.status = 'active' RETURNING 1
         ), ${recordEvent(s, 'rec', { ws: '$1', id: '$7', type: '$8', event: '$9' })}
         SELECT (SELECT status FROM agent) AS agent_status, (SELECT count(*)::int FROM rec) AS inserted`,
        [workspaceId, conversation.id, conversation.agentId, conversation.userId, conversation.status, JSON.stringify(conversation), event.id, event.type, eventJson(workspaceId, event)],
      );
      if (row?.inserted) {
        recorded();
        return 'inserted';
      }
      return row?.agent_status == null ? 'agent_not_found' : 'agent_inactive';
    },

    get: async (workspaceId, id) =>
      (await sql.query<{ data: Conversation }>(`SELECT data FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]))[0]?.data ?? null,

    list: async (workspaceId, { offset, limit, agentId, userId, status }) => {
      const filter = `workspace_id = $1 AND ($2::text IS NULL OR agent_id = $2) AND ($3::text IS NULL OR user_id = $3) AND ($4::text IS NULL OR status = $4)`;
      const [row] = await sql.query<{ total: number; items: Conversation[] }>(
        `SELECT (SELECT count(*)::int FROM ${s}.conversations WHERE ${filter}) AS total,
                (SELECT coalesce(jsonb_agg(data ORDER BY id DESC), '[]') FROM
                  (SELECT id, data FROM ${s}.conversations WHERE ${filter} ORDER BY id DESC OFFSET $5 LIMIT $6) page) AS items`,
        [workspaceId, agentId ?? null, userId ?? null, status ?? null, offset, limit],
      );
      return offsetPage(row);
    },

    update: (workspaceId, id, update) =>
      sql.transaction(async (tx) => {
        const [row] = await tx.query<{ data: Conversation }>(`SELECT data FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`, [workspaceId, id]);
        if (!row) return null;
        const change = update(row.data);
        if (!change) return row.data;
        // Callers never move a conversation to another agent: the stored agent is kept.
        const record = { ...change.record, id, agentId: row.data.agentId };
        const params: unknown[] = [workspaceId, id, record.userId, record.status, JSON.stringify(record)];
        const write = `UPDATE ${s}.conversations SET user_id = $3, status = $4, data = $5::jsonb WHERE workspace_id = $1 AND id = $2 RETURNING 1`;
        if (change.event) {
          const event = change.event;
          await tx.query(`WITH rec AS (${write}), ${recordEvent(s, 'rec', { ws: '$1', id: '$6', type: '$7', event: '$8' })} SELECT 1`, [
            ...params,
            event.id,
            event.type,
            eventJson(workspaceId, event),
          ]);
          recorded();
        } else await tx.query(write, params);
        return record;
      }),

    delete: (workspaceId, id, check) =>
      sql.transaction(async (tx) => {
        const [row] = await tx.query<{ data: Conversation }>(`SELECT data FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, [workspaceId, id]);
        if (!row) return false;
        check?.(row.data);
        // Its messages go by ON DELETE CASCADE, in the same statement.
        await tx.query(`DELETE FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
        return true;
      }),
  };
}
