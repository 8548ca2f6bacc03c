/** @module The reply queue on PostgreSQL: a FIFO per conversation, only its head leasable, one lease at a time. */
import { randomUUID } from 'node:crypto';
import { DEFAULT_REPLY_LEASE_MS, positiveInteger, type LeasedReply, type ReplyJob, type ReplyQueue } from '@parley/core';
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
 * as durable as the database. Table `reply_jobs` (migrations/0002_queues.sql), one row per request
 * waiting or in flight. A conversation's head is its row with the lowest `seq`; only a head with
 * no live lease (`leased_until` null or past) is leased, by one `UPDATE … FROM (SELECT … FOR
 * UPDATE SKIP LOCKED)` that sets the lease and a fresh token. So one conversation holds at most
 * one live lease, whichever worker asks: a second leaser either skips the locked head, or, once
 * the first committed, finds its lease live; the rows behind the head are not heads.
 *
 * That rests on one more rule: a request never becomes visible ahead of an earlier one of its
 * conversation. Two enqueues racing would otherwise draw `seq` 5 and 6 and commit 6 first, a
 * worker would lease 6, and 5 would then become a second head. So `enqueue` takes a
 * transaction-scoped advisory lock on the conversation before drawing `seq`.
 *
 * `ack` deletes the head (under a live lease with the same token) and NOTIFYs, so a waiting
 * worker picks the conversation's next request at once. Heads are served oldest `requestedAt`
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
    await this.sql.query(this.text.enqueue, [job.workspaceId, job.conversationId, requestedAt, JSON.stringify(job), this.channel]);
  }

  async lease(waitMs: number): Promise<LeasedReply | null> {
    if (!(waitMs >= 0)) throw new RangeError(`waitMs must be a number of ms ≥ 0, got ${waitMs}`);
    if (waitMs > 0) await this.wakeups.ready(Math.min(waitMs, this.pollMs));
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.closed) return null;
      const since = this.wakeups.generation(TOPIC);
      const token = randomUUID();
      const [row] = await this.sql.query<{ seq: number; job: string }>(this.text.lease, [this.leaseMs, token]);
      if (row) return { job: JSON.parse(row.job) as ReplyJob, receipt: `${row.seq}/${token}` };
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return null;
      await this.wakeups.wait(TOPIC, since, Math.min(left, this.pollMs));
    }
  }

  async extend(leased: LeasedReply): Promise<boolean> {
    const [seq, token] = parseReceipt(leased.receipt);
    return (await this.sql.query(this.text.extend, [seq, token, this.leaseMs])).length > 0;
  }

  async ack(leased: LeasedReply): Promise<boolean> {
    const [seq, token] = parseReceipt(leased.receipt);
    return (await this.sql.query(this.text.ack, [seq, token, this.channel])).length > 0;
  }

  async size(): Promise<number> {
    const [row] = await this.sql.query<{ size: number }>(this.text.size, []);
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
  return {
    enqueue: `
      WITH added AS (
        INSERT INTO ${table} (workspace_id, conversation_id, requested_at, job)
        SELECT $1::text, $2::text, $3::int8, $4::text
        FROM (SELECT pg_advisory_xact_lock(${lockClass}, hashtext(json_build_array($1::text, $2::text)::text))) AS serialized
        RETURNING 1
      )
      SELECT pg_notify($5, '${TOPIC}') FROM added`,
    lease: `
      UPDATE ${table} AS j SET leased_until = now() + $1::float8 * interval '1 millisecond', lease_token = $2
      FROM (
        SELECT h.seq FROM ${table} AS h
        WHERE (h.leased_until IS NULL OR h.leased_until <= now())
          AND NOT EXISTS (
            SELECT 1 FROM ${table} AS earlier
            WHERE earlier.workspace_id = h.workspace_id AND earlier.conversation_id = h.conversation_id AND earlier.seq < h.seq
          )
        ORDER BY h.requested_at, h.seq
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      ) AS head
      WHERE j.seq = head.seq
      RETURNING j.seq, j.job`,
    extend: `
      UPDATE ${table} SET leased_until = now() + $3::float8 * interval '1 millisecond'
      WHERE seq = $1 AND lease_token = $2 AND leased_until > now()
      RETURNING 1`,
    ack: `
      WITH done AS (DELETE FROM ${table} WHERE seq = $1 AND lease_token = $2 AND leased_until > now() RETURNING 1)
      SELECT pg_notify($3, '${TOPIC}') FROM done`,
    size: `SELECT count(*) AS size FROM ${table}`,
  };
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
