/** @module The delivery queue on PostgreSQL: job rows in two lanes, claimed with FOR UPDATE SKIP LOCKED under a lease. */
import {
  DEFAULT_DELIVERY_LEASE_MS,
  type DeliveryJob,
  type DeliveryLane,
  type DeliveryQueue,
  type DeliveryQueueStats,
  type LeasedJob,
} from '@parley/core/adapter';
import { Batcher } from '../batch.js';
import { isUnavailable } from '../faults.js';
import { quoteSchema, DEFAULT_SCHEMA } from '../schema.js';
import type { Sql } from '../sql.js';
import { queueChannel } from './channels.js';
import type { Notifier } from './notifier.js';
import { checkPollMs, MAX_POLL_MS, Wakeups } from './wakeup.js';

/** Options of {@link PostgresDeliveryQueue}. */
export interface PostgresDeliveryQueueOptions {
  sql: Sql;
  /** The schema migrated with `0002_queues.sql`; default `parley`. */
  schema?: string;
  /** Where wake-ups arrive (one per process, shared with the other queues); `null` polls only. */
  notifier: Notifier | null;
  /** How long a leased job is held for its worker before another may take it over, in ms; default 30 000. */
  leaseMs?: number;
  /** Longest sleep of a waiting `lease` between looks, in ms (1–1 000); default 1 000. */
  pollMs?: number;
}

const RECEIPT = /^[1-9]\d{0,18}$/;

interface ClaimedRow extends Record<string, unknown> {
  seq: number;
  ready_us: number;
  job: string;
}

/**
 * {@link DeliveryQueue} on PostgreSQL 14+ (and PGlite), shared by any number of worker processes
 * and as durable as the database. Table `delivery_jobs` (migrations/0002_queues.sql), one row per
 * attempt waiting or in flight; the receipt is the row's `seq`.
 * - `enqueue`: one INSERT of every job into lane `first` with a NOTIFY in the same statement.
 * - `lease`: one `UPDATE … FROM (SELECT … ORDER BY ready_at, seq LIMIT max FOR UPDATE SKIP LOCKED)`
 *   setting `leased_until`; each lane's SQL names its lane as a literal, so the planner uses that
 *   lane's partial index and a backlog of retries is never read by a first-lane lease. A job whose
 *   lease ran out is ready again and keeps its place (its `ready_at`). Nothing ready: the call
 *   waits for a NOTIFY, the next retry's due time or `pollMs`, whichever comes first.
 * - `ack`: DELETE of the row, the acks made while one is in flight together in the next statement
 *   (group commit, `Batcher`: one commit for many deliveries under load); `retry`: DELETE of the row and INSERT of the next job into lane
 *   `retry` at `dueAt` in one statement, inserting only when this call deleted the row — so the
 *   first ack or retry of a job wins and later ones do nothing. Finished jobs leave no row.
 * Times are the database's clock (`now()`), except `dueAt`, which the port defines on the wall
 * clock; so app servers and the database need synchronized clocks (NTP) for due times only.
 */
export class PostgresDeliveryQueue implements DeliveryQueue {
  readonly leaseMs: number;
  private readonly sql: Sql;
  private readonly pollMs: number;
  private readonly channel: string;
  private readonly wakeups: Wakeups;
  private readonly text: ReturnType<typeof statements>;
  private readonly acks: Batcher<number, void>;
  private closed = false;

  /** @throws TypeError for a schema that is not a plain identifier; RangeError for a `leaseMs` or `pollMs` out of range. */
  constructor(options: PostgresDeliveryQueueOptions) {
    const leaseMs = options.leaseMs ?? DEFAULT_DELIVERY_LEASE_MS;
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 1)
      throw new RangeError(`leaseMs must be a positive integer, got ${leaseMs}`);
    const schema = options.schema ?? DEFAULT_SCHEMA;
    this.text = statements(quoteSchema(schema));
    this.sql = options.sql;
    this.leaseMs = leaseMs;
    this.pollMs = checkPollMs(options.pollMs ?? MAX_POLL_MS);
    this.channel = queueChannel(schema);
    this.wakeups = new Wakeups(options.notifier, this.channel);
    this.acks = new Batcher<number, void>(
      async (seqs) => {
        await this.sql.query(this.text.ack, [seqs]);
        return seqs.map(() => undefined);
      },
      { failsWaiting: isUnavailable },
    );
  }

  async enqueue(jobs: readonly DeliveryJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.sql.query(this.text.enqueue, [jobs.map((job) => JSON.stringify(job)), this.channel]);
  }

  async lease(lane: DeliveryLane, max: number, waitMs: number): Promise<LeasedJob[]> {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be an integer ≥ 1, got ${max}`);
    if (!(waitMs >= 0)) throw new RangeError(`waitMs must be a number of ms ≥ 0, got ${waitMs}`);
    if (lane !== 'first' && lane !== 'retry')
      throw new RangeError(`lane must be 'first' or 'retry', got ${String(lane)}`);
    if (waitMs > 0) await this.wakeups.ready(Math.min(waitMs, this.pollMs));
    const deadline = Date.now() + waitMs;
    for (;;) {
      const since = this.wakeups.generation(lane);
      const rows = await this.sql.query<ClaimedRow>(this.text.claim[lane], [max, this.leaseMs]);
      if (rows.length > 0) {
        rows.sort((a, b) => a.ready_us - b.ready_us || a.seq - b.seq);
        return rows.map((row) => ({ job: JSON.parse(row.job) as DeliveryJob, receipt: String(row.seq) }));
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return [];
      let sleepMs = Math.min(left, this.pollMs);
      if (lane === 'retry') {
        const [next] = await this.sql.query<{ in_ms: number }>(this.text.nextDue, []);
        if (next) sleepMs = Math.min(sleepMs, Math.max(1, Math.ceil(next.in_ms)));
      }
      await this.wakeups.wait(lane, since, sleepMs);
      if (this.closed) return [];
    }
  }

  async ack(leased: LeasedJob): Promise<void> {
    await this.acks.add(parseReceipt(leased.receipt));
  }

  async retry(leased: LeasedJob, next: DeliveryJob, dueAt: number): Promise<void> {
    const seq = parseReceipt(leased.receipt);
    if (!Number.isFinite(dueAt)) throw new RangeError(`dueAt must be ms since the epoch, got ${dueAt}`);
    await this.sql.query(this.text.retry, [seq, Math.round(dueAt), JSON.stringify(next), this.channel]);
  }

  /** Exact counts in one statement: a scan of the queue's rows, which are the jobs waiting or in flight only. */
  async stats(): Promise<DeliveryQueueStats> {
    const [row] = await this.sql.query<DeliveryQueueStats & Record<string, unknown>>(this.text.stats, []);
    return {
      first: Number(row!.first),
      retry: Number(row!.retry),
      scheduled: Number(row!.scheduled),
      leased: Number(row!.leased),
    };
  }

  /** Ends waiting `lease` calls with `[]` and stops listening; the `Sql` and notifier belong to the caller. */
  async close(): Promise<void> {
    this.closed = true;
    await this.wakeups.close();
  }
}

/** The queue's SQL, each statement one round trip, with the schema quoted in. */
function statements(schema: string) {
  const table = `${schema}.delivery_jobs`;
  // `lane` is a literal in each claim so the planner picks that lane's partial index.
  // A first-lane job is ready from its enqueue on (its ready_at only orders the lane).
  const claim = (lane: DeliveryLane) => `
    UPDATE ${table} AS j SET leased_until = now() + $2::float8 * interval '1 millisecond'
    FROM (
      SELECT seq FROM ${table}
      WHERE lane = '${lane}'${lane === 'retry' ? ' AND ready_at <= now()' : ''} AND (leased_until IS NULL OR leased_until <= now())
      ORDER BY ready_at, seq
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    ) AS picked
    WHERE j.seq = picked.seq
    RETURNING j.seq, (extract(epoch FROM j.ready_at) * 1000000)::int8 AS ready_us, j.job`;
  return {
    enqueue: `
      WITH added AS (
        INSERT INTO ${table} (lane, ready_at, job)
        SELECT 'first'::text, now(), job FROM unnest($1::text[]) WITH ORDINALITY AS given(job, n) ORDER BY n
        RETURNING 1
      )
      SELECT pg_notify($2, 'first') FROM (SELECT 1 FROM added LIMIT 1) AS any_added`,
    claim: { first: claim('first'), retry: claim('retry') },
    nextDue: `
      SELECT extract(epoch FROM ready_at - now()) * 1000 AS in_ms FROM ${table}
      WHERE lane = 'retry' AND ready_at > now() AND leased_until IS NULL
      ORDER BY ready_at, seq LIMIT 1`,
    ack: `DELETE FROM ${table} WHERE seq = ANY($1::bigint[])`,
    retry: `
      WITH done AS (DELETE FROM ${table} WHERE seq = $1 RETURNING 1),
      added AS (
        INSERT INTO ${table} (lane, ready_at, job)
        SELECT 'retry'::text, to_timestamp($2::float8 / 1000), $3::text FROM done
        RETURNING ready_at
      )
      SELECT pg_notify($4, 'retry') FROM added WHERE ready_at <= now()`,
    stats: `
      SELECT count(*) FILTER (WHERE lane = 'first' AND leased_until IS NULL) AS first,
             count(*) FILTER (WHERE lane = 'retry' AND leased_until IS NULL AND ready_at <= now()) AS retry,
             count(*) FILTER (WHERE lane = 'retry' AND leased_until IS NULL AND ready_at > now()) AS scheduled,
             count(*) FILTER (WHERE leased_until IS NOT NULL) AS leased
      FROM ${table}`,
  };
}

/** @throws TypeError for a receipt this queue did not issue. */
function parseReceipt(receipt: string): number {
  if (typeof receipt !== 'string' || !RECEIPT.test(receipt))
    throw new TypeError('Not a receipt of PostgresDeliveryQueue.');
  return Number(receipt);
}
