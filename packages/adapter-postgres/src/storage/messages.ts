/**
 * @module Messages on PostgreSQL. An append is one statement: it moves the conversation's
 * `lastMessageAt`/`updatedAt` (only forwards) and its version on the condition that it is active, inserts the
 * message and records its event. History pages are keyset reads of the primary key
 * (workspace_id, conversation_id, id): `EXPLAIN` shows an Index Scan Backward with the cursor as
 * an index condition and a Limit on top, so a page costs O(limit) at any history length.
 */
import type { Message } from '@parley/core';
import {
  traceContextOf,
  usageDay,
  usageIncrements,
  type MessagePage,
  type MessageStore,
  type UsageRecord,
} from '@parley/core/adapter';
import { later } from './changes.js';
import { eventJson, recordEvent, recordLock, type StoreContext } from './context.js';

/** `storage.messages` on PostgreSQL. */
export function messageStore({ sql, s, recorded }: StoreContext): MessageStore {
  const exists = (cursor: string) =>
    `EXISTS (SELECT 1 FROM ${s}.messages WHERE workspace_id = $1 AND conversation_id = $2 AND id = ${cursor})`;
  return {
    append: async (scope, message, { event, usage }) => {
      const { workspaceId } = scope;
      const counted = usage ? countersOf(usage) : { fields: [], values: [] };
      const [row] = await sql.query<{ appended: number; found: boolean }>(
        `WITH ${recordLock('conversations', '$1', '$2')},
         conv AS (
           UPDATE ${s}.conversations SET data = data
             || jsonb_build_object('lastMessageAt', ${later(`data->'lastMessageAt'`, '$4')})
             || jsonb_build_object('updatedAt', ${later(`data->'updatedAt'`, '$4')}),
             version = version + 1
           FROM lk WHERE workspace_id = $1 AND id = $2 AND status = 'active' RETURNING 1
         ),
         rec AS (INSERT INTO ${s}.messages (workspace_id, conversation_id, id, data) SELECT $1, $2, $3, $5::json FROM conv RETURNING 1),
         ${recordEvent(s, 'rec', { ws: '$1', id: '$6', type: '$7', event: '$8', trace: '$12' })},
         -- A reply step's tokens, counted with the message; every append locks these rows in
         -- field order (countersOf), so two appends never wait for each other in a cycle.
         counted AS (
           INSERT INTO ${s}.usage_counters AS u (workspace_id, day, field, value)
           SELECT $1, $9::date, c.field, c.value FROM queued, unnest($10::text[], $11::bigint[]) AS c(field, value)
           ON CONFLICT (workspace_id, day, field) DO UPDATE SET value = u.value + excluded.value
         )
         SELECT (SELECT count(*)::int FROM rec) AS appended,
                EXISTS (SELECT 1 FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2) AS found`,
        [
          workspaceId,
          message.conversationId,
          message.id,
          message.createdAt,
          JSON.stringify(message),
          event.id,
          event.type,
          eventJson(workspaceId, event),
          usageDay(message.createdAt),
          counted.fields,
          counted.values,
          traceContextOf(scope) ?? null,
        ],
      );
      if (row?.appended) {
        recorded();
        return 'appended';
      }
      return row?.found ? 'conversation_completed' : 'conversation_not_found';
    },

    get: async ({ workspaceId }, conversationId, id) =>
      (
        await sql.query<{ data: Message }>(
          `SELECT data FROM ${s}.messages WHERE workspace_id = $1 AND conversation_id = $2 AND id = $3`,
          [workspaceId, conversationId, id],
        )
      )[0]?.data ?? null,

    page: async (
      { workspaceId },
      conversationId,
      { before, after, limit, requireConversation },
    ): Promise<MessagePage | null> => {
      const cursor = after ?? before ?? null;
      const newer = after !== undefined;
      // limit + 1 rows tell whether more follow; one round trip answers cursor, existence and page.
      const [row] = await sql.query<{ conversation: boolean; cursor: boolean; rows: Message[] }>(
        `SELECT EXISTS (SELECT 1 FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2) AS conversation,
                ($3::text IS NULL OR ${exists('$3')}) AS cursor,
                coalesce((SELECT json_agg(data ORDER BY id ${newer ? 'ASC' : 'DESC'}) FROM (
                  SELECT id, data FROM ${s}.messages
                  WHERE workspace_id = $1 AND conversation_id = $2 AND ($3::text IS NULL OR id ${newer ? '>' : '<'} $3)
                  ORDER BY id ${newer ? 'ASC' : 'DESC'} LIMIT $4) page), '[]'::json) AS rows`,
        [workspaceId, conversationId, cursor, limit + 1],
      );
      if (!row || (requireConversation && !row.conversation) || !row.cursor) return null;
      const hasMore = row.rows.length > limit;
      const messages = row.rows.slice(0, limit);
      return { messages: newer ? messages : messages.reverse(), hasMore };
    },
  };
}

/** The counter increments of a reply step (core's `usageIncrements`), in field order: one lock order for every writer. */
function countersOf(usage: UsageRecord): { fields: string[]; values: number[] } {
  const increments = usageIncrements(usage).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { fields: increments.map(([field]) => field), values: increments.map(([, value]) => value) };
}
