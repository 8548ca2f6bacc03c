/** @module The reply queue on PostgreSQL: a FIFO per conversation, only its head leasable, one lease at a time. */
import { randomUUID } from 'node:crypto';
import type { CancelledReplyJobs, ReplyClaim, WorkspaceScope } from '@parley/core/adapter';
import {
  DEFAULT_REPLY_LEASE_MS,
  positiveInteger,
  type LeasedReply,
  type ReplyJob,
  type ReplyQueue,
} from '@parley/core/adapter';
import { DEFAULT_SCHEMA, quoteSchema } from '../schema.js';
import type { Sql } from '../sql.js';
import { queueChannel } from './channels.js';
import type { Notifier } from './notifier.js';
import { checkPollMs, MAX_POLL_MS, Wakeups } from './wakeup.js';

/** Options of {@link PostgresReplyQueue}. */
export interface PostgresReplyQueueOptions {
  sql: Sql;
  /** The schema migrated with `0002_queues.sql`; default `parley`. */
  schema?: string;
  /** Where wake-ups arrive (one per process, shared with the other queues); `null` polls only. */
  notifier: Notifier | null;
  /** How long a lease holds a conversation unless renewed, in ms; default 30 000. */
  leaseMs?: number;
  /** Longest sleep of a waiting `lease` between looks, in ms (1–1 000); default 1 000. */
  pollMs?: number;
}

const TOPIC = 'reply';
const RECEIPT = /^([1-9]\d{0,18})\/([0-9a-f-]{36})$/;

/**
 * {@link ReplyQueue} on PostgreSQL 14+ (and PGlite), shared by any number of worker processes and
 * as durable as the database. Table `reply_jobs` (migrations/0002_queues.sql, 0007_reply_routes.sql),
 * one row per request waiting or in flight. A conversation's head is its row with the lowest `seq`,
 * marked `head` by triggers; only a head with no live lease (`leased_until` null or past) is
 * leased, by one `UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED)` that sets the lease and a
 * fresh token. So one conversation holds at most one live lease, whichever worker asks: a second
 * leaser either skips the locked head, or, once the first committed, finds its lease live; the
 * rows behind the head are not heads. The claim reads, per model it names, that model's oldest
 * heads from the partial index `reply_jobs_ready` (and, with `askedBefore`, the oldest heads of
 * all from `reply_jobs_overdue`), so it passes only heads under a live lease, never the jobs of
 * other models or those queued behind a head.
 *
 * That rests on one more rule: a request never becomes visible ahead of an earlier one of its
 * conversation. Two enqueues racing would otherwise draw `seq` 5 and 6 and commit 6 first, a
 * worker would lease 6, and 5 would then become a second head. So `enqueue` takes a
 * transaction-scoped advisory lock on the conversation before drawing `seq`.
 *
 * `cancel` deletes a conversation's rows without a live lease and marks (`cancelled`,
 * migrations/0008_reply_cancel.sql) the one under a live lease, in one statement holding the
 * conversation's advisory lock; `cancelled` reads the marks of a worker's leases in one query.
 *
 * `ack` deletes the head (under a live lease with the same token, holding the conversation's
 * advisory lock, so the next head is marked after any enqueue in flight) and NOTIFYs, so a
 * waiting worker picks the conversation's next request at once. Heads are served oldest `requestedAt`
 * first. Times are the database's clock.
 */
export class PostgresReplyQueue implements ReplyQueue {
  readonly leaseMs: number;
  private readonly sql: Sql;
  private readonly pollMs: number;
  private readonly channel: string;
  private readonly wakeups: Wakeups;
  private readonly text: ReturnType<typeof statements>;
  private closed = false;

  /** @throws TypeError for a schema that is not a plain identifier; RangeError for a `leaseMs` or `pollMs` out of range. */
  constructor(options: PostgresReplyQueueOptions) {
    const leaseMs = positiveInteger(options.leaseMs, DEFAULT_REPLY_LEASE_MS, 'leaseMs');
    const schema = options.schema ?? DEFAULT_SCHEMA;
    this.text = statements(quoteSchema(schema), schema);
    this.sql = options.sql;
    this.leaseMs = leaseMs;
    this.pollMs = checkPollMs(options.pollMs ?? MAX_POLL_MS);
    this.channel = queueChannel(schema);
    this.wakeups = new Wakeups(options.notifier, this.channel);
  }

  async enqueue(job: ReplyJob): Promise<void> {
    const requestedAt = Math.max(0, Math.floor(job.requestedAt));
    const { workspaceId, conversationId, model } = job;
    const params = [workspaceId, conversationId, requestedAt, JSON.stringify(job), this.channel, model];
    await this.sql.query(this.text.enqueue, params);
  }

  async lease(waitMs: number, claim: ReplyClaim): Promise<LeasedReply | null> {
    if (!(waitMs >= 0)) throw new RangeError(`waitMs must be a number of ms ≥ 0, got ${waitMs}`);
    if (waitMs > 0) await this.wakeups.ready(Math.min(waitMs, this.pollMs));
    const deadline = Date.now() + waitMs;
    // '': jobs queued before 0007, which every worker leases.
    const models = ['', ...new Set(claim.models)];
    const askedBefore = claim.askedBefore === undefined ? 0 : Math.max(0, Math.floor(claim.askedBefore));
    for (;;) {
      if (this.closed) return null;
      const since = this.wakeups.generation(TOPIC);
      const token = randomUUID();
      const params = [this.leaseMs, token, models, askedBefore];
      const [row] = await this.sql.query<JobRow & { seq: number; cancelled: boolean }>(this.text.lease, params);
      if (row) {
        const leased: LeasedReply = { job: jobOf(row), receipt: `${row.seq}/${token}` };
        return row.cancelled ? { ...leased, cancelled: true } : leased;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return null;
      await this.wakeups.wait(TOPIC, since, Math.min(left, this.pollMs));
    }
  }

  async extend(leased: LeasedReply): Promise<boolean> {
    const [seq, token] = parseReceipt(leased.receipt);
    return (await this.sql.query(this.text.extend, [seq, token, this.leaseMs])).length > 0;
  }

  async reroute(leased: LeasedReply, model: string): Promise<boolean> {
    const [seq, token] = parseReceipt(leased.receipt);
    return (await this.sql.query(this.text.reroute, [seq, token, model, this.channel])).length > 0;
  }

  async ack(leased: LeasedReply): Promise<boolean> {
    const [seq, token] = parseReceipt(leased.receipt);
    return (await this.sql.query(this.text.ack, [seq, token, this.channel])).length > 0;
  }

  async cancel(scope: WorkspaceScope, conversationId: string): Promise<CancelledReplyJobs> {
    const rows = await this.sql.query<JobRow & { running: boolean }>(this.text.cancel, [
      scope.workspaceId,
      conversationId,
    ]);
    return {
      removed: rows.filter((row) => !row.running).map(jobOf),
      running: rows.filter((row) => row.running).map(jobOf),
    };
  }

  async cancelled(leases: readonly LeasedReply[]): Promise<string[]> {
    if (leases.length === 0) return [];
    const parsed = leases.map((leased) => parseReceipt(leased.receipt));
    const rows = await this.sql.query<{ seq: string | number }>(this.text.cancelled, [
      parsed.map(([seq]) => seq),
      parsed.map(([, token]) => token),
    ]);
    const found = new Set(rows.map((row) => Number(row.seq)));
    return leases.filter((_, index) => found.has(parsed[index]![0])).map((leased) => leased.receipt);
  }

  async size(): Promise<number> {
    const [row] = await this.sql.query<{ size: number }>(this.text.size, []);
    return Number(row?.size ?? 0);
  }

  async waiting(scope: WorkspaceScope, conversationId: string): Promise<number> {
    const [row] = await this.sql.query<{ size: number }>(this.text.waiting, [scope.workspaceId, conversationId]);
    return Number(row?.size ?? 0);
  }

  /** Ends waiting `lease` calls with `null` and stops listening; the `Sql` and notifier belong to the caller. */
  async close(): Promise<void> {
    this.closed = true;
    await this.wakeups.close();
  }
}

/** The queue's SQL, each statement one round trip, with the schema quoted in. */
function statements(quoted: string, schema: string) {
  const table = `${quoted}.reply_jobs`;
  // The lock's first key names this schema's reply queue; the second, the conversation.
  const lockClass = `hashtext(${literal(`parley.reply_jobs:${schema}`)})`;
  const conversationLock = (workspace: string, conversation: string) =>
    `pg_advisory_xact_lock(${lockClass}, hashtext(json_build_array(${workspace}, ${conversation})::text))`;
  return {
    enqueue: `
      WITH added AS (
        INSERT INTO ${table} (workspace_id, conversation_id, requested_at, job, model)
        SELECT $1::text, $2::text, $3::int8, $4::text, $6::text
        FROM (SELECT ${conversationLock('$1::text', '$2::text')}) AS serialized
        RETURNING 1
      )
      SELECT pg_notify($5, '${TOPIC}') FROM added`,
    // Per claimed model its oldest ready head, and the oldest ready head asked before $4; the
    // oldest of those is leased. Each candidate is locked (SKIP LOCKED) for this statement only.
    lease: `
      WITH candidates AS (
        SELECT c.seq, c.requested_at FROM unnest($3::text[]) AS claimed(model)
        CROSS JOIN LATERAL (
          SELECT h.seq, h.requested_at FROM ${table} AS h
          WHERE h.head AND h.model = claimed.model AND (h.leased_until IS NULL OR h.leased_until <= now())
          ORDER BY h.requested_at, h.seq
          LIMIT 1
          FOR UPDATE SKIP LOCKED
        ) AS c
        UNION ALL
        SELECT s.seq, s.requested_at FROM (
          SELECT h.seq, h.requested_at FROM ${table} AS h
          WHERE h.head AND h.requested_at::float8 < $4::float8 AND (h.leased_until IS NULL OR h.leased_until <= now())
          ORDER BY h.requested_at::float8, h.seq
          LIMIT 1
          FOR UPDATE SKIP LOCKED
        ) AS s
      )
      UPDATE ${table} AS j SET leased_until = now() + $1::float8 * interval '1 millisecond', lease_token = $2
      FROM (SELECT seq FROM candidates ORDER BY requested_at, seq LIMIT 1) AS picked
      WHERE j.seq = picked.seq
      RETURNING j.seq, j.job, j.model, j.cancelled`,
    extend: `
      UPDATE ${table} SET leased_until = now() + $3::float8 * interval '1 millisecond'
      WHERE seq = $1 AND lease_token = $2 AND leased_until > now()
      RETURNING 1`,
    reroute: `
      WITH moved AS (
        UPDATE ${table} SET model = $3, leased_until = NULL, lease_token = NULL
        WHERE seq = $1 AND lease_token = $2 AND leased_until > now()
        RETURNING 1
      )
      SELECT pg_notify($4, '${TOPIC}') FROM moved`,
    // The conversation's lock, as enqueue takes it: the trigger marking the next head sees any
    // request enqueued before.
    ack: `
      WITH done AS (
        DELETE FROM ${table} AS j
        USING (
          SELECT ${conversationLock('r.workspace_id', 'r.conversation_id')}
          FROM ${table} AS r WHERE r.seq = $1
        ) AS serialized
        WHERE j.seq = $1 AND j.lease_token = $2 AND j.leased_until > now()
        RETURNING 1
      )
      SELECT pg_notify($3, '${TOPIC}') FROM done`,
    // The conversation's lock, as enqueue and ack take it, so the trigger marking a new head sees
    // any request enqueued before. Its rows are locked (FOR UPDATE reads each row's latest version:
    // a lease committed after this statement's snapshot counts as live), then, in queue order,
    // those without a live lease are deleted and the one under a live lease is marked.
    cancel: `
      WITH serialized AS (SELECT ${conversationLock('$1::text', '$2::text')}),
      locked AS (
        SELECT j.seq, j.job, j.model, j.cancelled, (j.leased_until IS NOT NULL AND j.leased_until > now()) AS live
        FROM ${table} AS j, serialized
        WHERE j.workspace_id = $1 AND j.conversation_id = $2
        FOR UPDATE OF j
      ),
      removed AS (
        DELETE FROM ${table} AS j USING locked WHERE j.seq = locked.seq AND NOT locked.live
        RETURNING j.seq
      ),
      marked AS (
        UPDATE ${table} AS j SET cancelled = true FROM locked
        WHERE j.seq = locked.seq AND locked.live AND NOT locked.cancelled
        RETURNING j.seq
      )
      SELECT locked.job, locked.model, locked.live AS running FROM locked
      WHERE locked.seq IN (SELECT seq FROM removed UNION ALL SELECT seq FROM marked)
      ORDER BY locked.seq`,
    cancelled: `
      SELECT j.seq FROM unnest($1::int8[], $2::uuid[]) AS held(seq, token)
      JOIN ${table} AS j ON j.seq = held.seq AND j.lease_token = held.token
      WHERE j.cancelled AND j.leased_until > now()`,
    size: `SELECT count(*) AS size FROM ${table}`,
    // reply_jobs_conversation serves it.
    waiting: `SELECT count(*) AS size FROM ${table} WHERE workspace_id = $1 AND conversation_id = $2`,
  };
}

/** What a statement returns of a job: its JSON and its current model. */
type JobRow = {
  job: string;
  model: string;
};

function jobOf(row: JobRow): ReplyJob {
  return { ...(JSON.parse(row.job) as ReplyJob), model: row.model };
}

/** A SQL string literal of a plain identifier-based text (no quotes inside, by construction). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** @throws TypeError for a receipt this queue did not issue. */
function parseReceipt(receipt: string): [number, string] {
  const match = typeof receipt === 'string' ? RECEIPT.exec(receipt) : null;
  if (!match) throw new TypeError('Not a receipt of PostgresReplyQueue.');
  return [Number(match[1]), match[2]!];
}
