/**
 * @module Messages on PostgreSQL. An append moves the conversation's `last_message_at` (only
 * forwards; readers lay it over `lastMessageAt` and `updatedAt`, see conversations.ts) and its
 * version on the condition that it is active, inserts the message and records its event, in one
 * statement. The appends made while the previous one is in flight go out together (group commit,
 * `Batcher`): one call of `append_messages` and one transaction for many appends, each decided as
 * if alone, in the order made; a reply step's append, which also counts usage, goes alone.
 * History pages are keyset reads of the primary key (workspace_id, conversation_id, id): `EXPLAIN`
 * shows an Index Scan Backward with the cursor as an index condition and a Limit on top, so a page
 * costs O(limit) at any history length.
 */
import type { DomainEvent, Message } from '@parley/core';
import {
  traceContextOf,
  usageDay,
  usageIncrements,
  type MessagePage,
  type MessageStore,
  type UsageRecord,
} from '@parley/core/adapter';
import { Batcher } from '../batch.js';
import { againOnDeadlock, isUnavailable } from '../faults.js';
import { eventJson, recordEvent, recordLock, type StoreContext } from './context.js';

type AppendOutcome = Awaited<ReturnType<MessageStore['append']>>;

/** One append of a batch: the message, its event and the trace context it was made in. */
interface Append {
  workspaceId: string;
  message: Message;
  event: DomainEvent;
  trace: string | null;
}

/** `storage.messages` on PostgreSQL. */
export function messageStore({ sql, s, recorded }: StoreContext): MessageStore {
  const exists = (cursor: string) =>
    `EXISTS (SELECT 1 FROM ${s}.messages WHERE workspace_id = $1 AND conversation_id = $2 AND id = ${cursor})`;
  const batches = new Batcher<Append, AppendOutcome>((appends) => appendAll({ sql, s }, appends), {
    failsWaiting: isUnavailable,
  });
  return {
    append: async (scope, message, { event, usage }) => {
      const { workspaceId } = scope;
      if (!usage) {
        const outcome = await batches.add({ workspaceId, message, event, trace: traceContextOf(scope) ?? null });
        if (outcome === 'appended') recorded();
        return outcome;
      }
      const counted = countersOf(usage);
      const [row] = await sql.query<{ appended: number; found: boolean }>(
        `WITH ${recordLock('conversations', '$1', '$2')},
         conv AS (
           UPDATE ${s}.conversations SET last_message_at = greatest(last_message_at, $4::text), version = version + 1
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
      // The page is always bounded by an id ($5: the cursor, or past every id on a first page), so
      // the bound is an index condition and the plan is a backward (forward) scan of the primary
      // key whatever the statistics say; without that bound, a table never analysed (a bulk load
      // before autovacuum's first pass) is read whole and sorted — 35 ms at 10⁵ messages.
      const [row] = await sql.query<{ conversation: boolean; cursor: boolean; rows: Message[] }>(
        `SELECT EXISTS (SELECT 1 FROM ${s}.conversations WHERE workspace_id = $1 AND id = $2) AS conversation,
                ($3::text IS NULL OR ${exists('$3')}) AS cursor,
                coalesce((SELECT json_agg(data ORDER BY id ${newer ? 'ASC' : 'DESC'}) FROM (
                  SELECT id, data FROM ${s}.messages
                  WHERE workspace_id = $1 AND conversation_id = $2 AND id ${newer ? '>' : '<'} $5
                  ORDER BY id ${newer ? 'ASC' : 'DESC'} LIMIT $4) page), '[]'::json) AS rows`,
        [workspaceId, conversationId, cursor, limit + 1, cursor ?? (newer ? '' : PAST_EVERY_ID)],
      );
      if (!row || (requireConversation && !row.conversation) || !row.cursor) return null;
      const hasMore = row.rows.length > limit;
      const messages = row.rows.slice(0, limit);
      return { messages: newer ? messages : messages.reverse(), hasMore };
    },
  };
}

/** Sorts after every id in the "C" collation (the largest code point; ids are ASCII). */
const PAST_EVERY_ID = '\u{10FFFF}';

/** The counter increments of a reply step (core's `usageIncrements`), in field order: one lock order for every writer. */
function countersOf(usage: UsageRecord): { fields: string[]; values: number[] } {
  const increments = usageIncrements(usage).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { fields: increments.map(([field]) => field), values: increments.map(([, value]) => value) };
}

/**
 * Appends `appends` in one call of `append_messages` (migrations/0013_append_messages.sql, as
 * 0015 redefines it; PostgreSQL keeps its plan per connection), each decided as if alone and in
 * the given order; their outcomes in the same order. Conversations are locked in (workspace, id)
 * order, after their record locks (`recordLock`), so two processes' batches never wait for each
 * other in a cycle; a deadlock with another multi-row writer (an agent's delete removing its
 * conversations) rolls the whole statement back, and it runs once more.
 */
async function appendAll({ sql, s }: Pick<StoreContext, 'sql' | 's'>, appends: Append[]): Promise<AppendOutcome[]> {
  const column = <T>(pick: (append: Append) => T) => appends.map(pick);
  const params = [
    column((a) => a.workspaceId),
    column((a) => a.message.conversationId),
    column((a) => a.message.id),
    column((a) => a.message.createdAt),
    column((a) => JSON.stringify(a.message)),
    column((a) => a.event.id),
    column((a) => a.event.type),
    column((a) => eventJson(a.workspaceId, a.event)),
    column((a) => a.trace),
  ];
  const text = `SELECT appended, conversation_found FROM ${s}.append_messages($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
  const rows = await againOnDeadlock(
    () => sql.query<{ appended: boolean; conversation_found: boolean }>(text, params),
    2,
  );
  return rows.map((row) =>
    row.appended ? 'appended' : row.conversation_found ? 'conversation_completed' : 'conversation_not_found',
  );
}
