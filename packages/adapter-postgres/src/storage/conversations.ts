/** @module Conversations on PostgreSQL: each write, its preconditions (its agent, on insert) and its event in one statement. */
import type { Conversation } from '@parley/core';
import { traceContextOf, type ConversationStore } from '@parley/core/adapter';
import { applyChange, deleteRecord, later, recordData, type RecordTable } from './changes.js';
import { eventJson, offsetPage, pageItems, recordEvent, type StoreContext } from './context.js';
import { recordReader } from './record-reader.js';

/**
 * A conversation as read from the row `c`: `data` with `lastMessageAt` and `updatedAt` each the
 * later of its own and `last_message_at`, the column message appends move instead of rewriting
 * `data` (migrations/0015_conversation_last_message_at.sql); `data` alone while no append set it.
 */
const CONVERSATION_DATA = (c: string) =>
  `CASE WHEN ${c}.last_message_at IS NULL THEN ${c}.data ELSE ${c}.data || jsonb_build_object(
     'lastMessageAt', ${later(`${c}.data->'lastMessageAt'`, `${c}.last_message_at`)},
     'updatedAt', ${later(`${c}.data->'updatedAt'`, `${c}.last_message_at`)}) END`;

// Callers never change `agentId` (ports/storage.ts), so only these columns follow `data`.
const CONVERSATIONS: RecordTable = {
  name: 'conversations',
  columns: { status: 'status', user_id: 'userId' },
  data: CONVERSATION_DATA,
};

/** `storage.conversations` on PostgreSQL. */
export function conversationStore(context: StoreContext): ConversationStore {
  const { sql, s, recorded } = context;
  return {
    insert: async (scope, conversation, { event }) => {
      const { workspaceId } = scope;
      // FOR SHARE on the agent: a concurrent deactivation or delete (which lock it for update)
      // either commits first and is seen here, or waits for this insert to commit.
      const [row] = await sql.query<{ agent_status: string | null; inserted: number }>(
        `WITH agent AS (SELECT status FROM ${s}.agents WHERE workspace_id = $1 AND id = $3 FOR SHARE),
         rec AS (
           INSERT INTO ${s}.conversations (workspace_id, id, agent_id, user_id, status, data)
           SELECT $1, $2, $3, $4, $5, $6::jsonb FROM agent WHERE agent.status = 'active' RETURNING 1
         ), ${recordEvent(s, 'rec', { ws: '$1', id: '$7', type: '$8', event: '$9', trace: '$10' })}
         SELECT (SELECT status FROM agent) AS agent_status, (SELECT count(*)::int FROM rec) AS inserted`,
        [
          workspaceId,
          conversation.id,
          conversation.agentId,
          conversation.userId,
          conversation.status,
          JSON.stringify(conversation),
          event.id,
          event.type,
          eventJson(workspaceId, event),
          traceContextOf(scope) ?? null,
        ],
      );
      if (row?.inserted) {
        recorded();
        return 'inserted';
      }
      return row?.agent_status == null ? 'agent_not_found' : 'agent_inactive';
    },

    get: recordReader<Conversation>(context, CONVERSATIONS),

    list: async ({ workspaceId }, { offset, limit, agentId, userId, status }) => {
      const filter = `workspace_id = $1 AND ($2::text IS NULL OR agent_id = $2) AND ($3::text IS NULL OR user_id = $3) AND ($4::text IS NULL OR status = $4)`;
      const [row] = await sql.query<{ total: number; items: [Conversation, number][] }>(
        `SELECT (SELECT count(*)::int FROM ${s}.conversations WHERE ${filter}) AS total,
                (SELECT ${pageItems} FROM
                  (SELECT id, ${recordData(CONVERSATIONS, 'c')} AS data, version FROM ${s}.conversations AS c
                   WHERE ${filter} ORDER BY id DESC OFFSET $5 LIMIT $6) page) AS items`,
        [workspaceId, agentId ?? null, userId ?? null, status ?? null, offset, limit],
      );
      return offsetPage(row);
    },

    update: (scope, id, change) => applyChange<Conversation>(context, CONVERSATIONS, scope, id, change),

    // Its messages go by ON DELETE CASCADE, in the same statement.
    delete: (scope, id, options) => deleteRecord<Conversation>(context, CONVERSATIONS, scope, id, options),
  };
}
