/**
 * @module Messages on PostgreSQL. An append checks that its conversation is active, inserts the
 * message and records its event, in one statement; the conversation's `lastMessageAt`, `updatedAt`
 * and version move with it, read from its newest message (migrations/0012_conversation_head.sql),
 * so appends to many conversations write no conversation rows. The appends made while the
 * previous one is in flight go out together (group commit, `Batcher`): one statement and one
 * transaction for many appends, each decided as if alone, in the order made; a reply step's
 * append, which also counts usage, goes alone. History pages are keyset reads of the primary key
 * (workspace_id, conversation_id, id): `EXPLAIN` shows an Index Scan Backward with the cursor as an
 * index condition and a Limit on top, so a page costs O(limit) at any history length.
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
import { later } from './changes.js';
import { eventJson, type StoreContext } from './context.js';

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
      const append = { workspaceId: scope.workspaceId, message, event, trace: traceContextOf(scope) ?? null };
      // A reply step's append, which also counts usage, goes alone.
      const outcome = usage ? (await appendAll({ sql, s }, [append], usage))[0]! : await batches.add(append);
      if (outcome === 'appended') recorded();
      return outcome;
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
 * Appends `appends` in one statement, each decided as if alone and in the given order; their
 * outcomes in the same order. With `usage` (one append: a reply step's), its tokens are counted in
 * the same statement.
 *
 * Each conversation of the batch is handled once, in (workspace, id) order: its append lock and
 * newest message (`lock_for_append`, migrations/0012_conversation_head.sql), then its row lock
 * with the active check — a completion or delete that commits first is seen here, one that comes
 * later waits for this append to commit. The message that becomes the conversation's newest
 * carries its running figures (`appends`, `last_message_at`); the conversation's row is written
 * only when every message of the batch is older than its newest (a late arrival). Locks are taken
 * in one order by every batch, so two processes' batches never wait for each other in a cycle; a
 * deadlock with another multi-row writer (an agent's delete removing its conversations) rolls the
 * whole statement back, and it runs once more.
 */
async function appendAll(
  { sql, s }: Pick<StoreContext, 'sql' | 's'>,
  appends: Append[],
  usage?: UsageRecord,
): Promise<AppendOutcome[]> {
  const column = <T>(pick: (append: Append) => T) => appends.map(pick);
  const params: unknown[] = [
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
  let counted = '';
  if (usage) {
    const { fields, values } = countersOf(usage);
    params.push(usageDay(appends[0]!.message.createdAt), fields, values);
    // Every append locks these rows in field order (countersOf): two never wait for each other in a cycle.
    counted = `,
    counted AS (
      INSERT INTO ${s}.usage_counters AS u (workspace_id, day, field, value)
      SELECT l.workspace_id, $10::date, c.field, c.value FROM logged l, unnest($11::text[], $12::bigint[]) AS c(field, value)
      ON CONFLICT (workspace_id, day, field) DO UPDATE SET value = u.value + excluded.value
    )`;
  }
  const text = `
    WITH given AS MATERIALIZED (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
        WITH ORDINALITY AS g(ws, conv, id, created_at, data, event_id, event_type, event, trace, ord)
    ),
    heads AS MATERIALIZED (
      SELECT ws, conv, ${s}.lock_for_append(ws, conv) AS head
      FROM (SELECT DISTINCT ws, conv FROM given ORDER BY ws, conv) AS each_conversation
    ),
    active AS MATERIALIZED (
      SELECT c.workspace_id AS ws, c.id AS conv FROM ${s}.conversations c JOIN heads h ON c.workspace_id = h.ws AND c.id = h.conv
      WHERE c.status = 'active' ORDER BY c.workspace_id, c.id FOR NO KEY UPDATE OF c
    ),
    batch AS (
      SELECT g.ws, g.conv, count(*)::int AS n, max(g.created_at COLLATE "C") AS last, max(g.id COLLATE "C") AS top
      FROM given g JOIN active a ON a.ws = g.ws AND a.conv = g.conv GROUP BY g.ws, g.conv
    ),
    figures AS MATERIALIZED (
      SELECT b.ws, b.conv, b.n, b.last, b.top, (h.head).id IS NULL OR b.top > (h.head).id AS moves,
             coalesce((h.head).appends, 0) + b.n AS appends, greatest((h.head).last_message_at, b.last) AS last_message_at
      FROM batch b JOIN heads h ON h.ws = b.ws AND h.conv = b.conv
    ),
    conv AS (
      UPDATE ${s}.conversations AS c SET data = c.data
          || jsonb_build_object('lastMessageAt', ${later(`c.data->'lastMessageAt'`, 'f.last')})
          || jsonb_build_object('updatedAt', ${later(`c.data->'updatedAt'`, 'f.last')}),
        version = c.version + f.n
      FROM figures f WHERE c.workspace_id = f.ws AND c.id = f.conv AND NOT f.moves
    ),
    rec AS (
      INSERT INTO ${s}.messages (workspace_id, conversation_id, id, data, appends, last_message_at)
      SELECT g.ws, g.conv, g.id, g.data::json,
             CASE WHEN f.moves AND g.id = f.top THEN f.appends END,
             CASE WHEN f.moves AND g.id = f.top THEN f.last_message_at END
      FROM given g JOIN figures f ON f.ws = g.ws AND f.conv = g.conv
      ORDER BY g.ord RETURNING workspace_id, id
    ),
    logged AS (
      INSERT INTO ${s}.events (workspace_id, id, type, event)
      SELECT g.ws, g.event_id, g.event_type, g.event::json FROM given g JOIN rec ON rec.workspace_id = g.ws AND rec.id = g.id
      ORDER BY g.ord RETURNING workspace_id, xid, seq, id
    ),
    queued AS (
      INSERT INTO ${s}.outbox (workspace_id, xid, seq, trace_context)
      SELECT l.workspace_id, l.xid, l.seq, g.trace FROM logged l JOIN given g ON g.ws = l.workspace_id AND g.event_id = l.id
      RETURNING workspace_id
    ),
    leases AS (INSERT INTO ${s}.outbox_leases (workspace_id) SELECT DISTINCT workspace_id FROM queued ON CONFLICT DO NOTHING)${counted}
    SELECT EXISTS (SELECT 1 FROM rec WHERE rec.workspace_id = g.ws AND rec.id = g.id) AS appended,
           EXISTS (SELECT 1 FROM ${s}.conversations c WHERE c.workspace_id = g.ws AND c.id = g.conv) AS found
    FROM given g ORDER BY g.ord`;
  const rows = await againOnDeadlock(() => sql.query<{ appended: boolean; found: boolean }>(text, params), 2);
  return rows.map((row) =>
    row.appended ? 'appended' : row.found ? 'conversation_completed' : 'conversation_not_found',
  );
}
