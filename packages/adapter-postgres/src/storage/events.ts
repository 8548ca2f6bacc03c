/**
 * @module The event log and its outbox on PostgreSQL. An event's position is (xid, seq): the
 * transaction that recorded it and a sequence number (migrations/0011_event_order.sql). Readers
 * pass only positions below the oldest transaction still running (`STABLE_XID`), so an event that
 * commits late can never land behind a reader; the outbox hands one workspace's oldest such events
 * to one taker at a time, claiming the workspace's lease row with FOR UPDATE SKIP LOCKED.
 */
import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '@parley/core';
import type { EventOutbox, EventStore, OutboxBatch } from '@parley/core/adapter';
import { retained, retentionStart, STABLE_XID, type StoreContext } from './context.js';

/** `storage.events` on PostgreSQL. */
export function eventStore({ sql, s, retentionMs }: StoreContext): EventStore {
  const live = retained('recorded_at', '$2');
  return {
    get: async ({ workspaceId }, id) =>
      (
        await sql.query<{ event: DomainEvent }>(
          `SELECT event FROM ${s}.events WHERE workspace_id = $1 AND ${live} AND id = $3`,
          [workspaceId, retentionMs, id],
        )
      )[0]?.event ?? null,
    // Without `type`: a range scan of the primary key (workspace_id, xid, seq); with it, of
    // events_by_type. Events committed but not yet stable (a transaction older than theirs is
    // still running) are not listed yet; when the page is short, the read is tried again until the
    // events committed when it began are stable (usually a few ms), so a caller reads its own
    // committed writes. Events committed meanwhile do not prolong the wait.
    list: async ({ workspaceId }, { after, limit, type }) => {
      const settle = new Settling();
      for (;;) {
        const [row] = await sql.query<{ cursor: boolean; rows: DomainEvent[]; stable: string; pending: string | null }>(
          `WITH cursor AS MATERIALIZED (
             SELECT xid, seq FROM ${s}.events WHERE $3::text IS NOT NULL AND workspace_id = $1 AND id = $3 AND ${live}
             UNION ALL SELECT '0'::xid8, 0 WHERE $3::text IS NULL
           ), stable AS MATERIALIZED (SELECT ${STABLE_XID} AS xid)
           SELECT EXISTS (SELECT 1 FROM cursor) AS cursor,
                  coalesce((SELECT json_agg(event ORDER BY xid, seq) FROM (
                    SELECT e.xid, e.seq, e.event FROM ${s}.events e, cursor c, stable
                    WHERE e.workspace_id = $1 AND (e.xid, e.seq) > (c.xid, c.seq) AND e.xid < stable.xid
                      AND ${live} AND ($4::text IS NULL OR e.type = $4)
                    ORDER BY e.xid, e.seq LIMIT $5) page), '[]'::json) AS rows,
                  (SELECT xid::text FROM stable) AS stable,
                  (SELECT max(e.xid)::text FROM ${s}.events e, stable WHERE e.workspace_id = $1 AND e.xid >= stable.xid) AS pending`,
          [workspaceId, retentionMs, after ?? null, type ?? null, limit + 1],
        );
        if (!row || !row.cursor) return null;
        if (row.rows.length <= limit && (await settle.waited(row))) continue;
        return { events: row.rows.slice(0, limit), hasMore: row.rows.length > limit };
      }
    },
  };
}

/** How long a read waits at most for the events committed before it to become stable, in ms. */
const SETTLE_MS = 1_000;

/**
 * A reader's wait for the events committed before it began (`pending`: the highest transaction
 * id among committed events not yet stable, from its first read) to become stable: they are
 * below the oldest transaction still running once the transactions older than them have ended,
 * usually within milliseconds; at most {@link SETTLE_MS}. Events committed meanwhile do not
 * prolong the wait. So a caller reads its own acknowledged writes, as on the other backends.
 */
class Settling {
  private awaited: bigint | undefined;
  private readonly deadline = Date.now() + SETTLE_MS;
  private pauseMs = 1;

  /** Given a read's `stable` and `pending` (xid8 as text): waits a little and answers true when it should read again. */
  async waited(read: { stable: string; pending: string | null }): Promise<boolean> {
    this.awaited ??= read.pending === null ? -1n : BigInt(read.pending);
    if (BigInt(read.stable) > this.awaited || Date.now() >= this.deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
    this.pauseMs = Math.min(this.pauseMs * 2, 50);
    return true;
  }
}

/** How often a waiting `take` looks again when nothing in this process woke it, in ms. */
const POLL_MS = 200;

/** The outbox's in-process wake-up: writes of this process call `notify`, takers `wait`. */
export class Wakeup {
  private readonly waiters = new Set<() => void>();
  notify(): void {
    for (const wake of this.waiters) wake();
  }
  /** Resolves after `ms` or at the next `notify`, whichever is first. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.waiters.add(done);
    });
  }
}

/** `storage.outbox` on PostgreSQL; `wakeup` is notified by this storage's writes. */
export function outboxStore({ sql, s, retentionMs, leaseMs }: StoreContext, wakeup: Wakeup): EventOutbox {
  /** The retention's start: older outbox rows are skipped (and deleted by the next ack or the sweep). */
  const since = retentionStart('$3');
  // Served workspaces go to the back (served_at), so one busy workspace cannot starve the others.
  // A workspace's rows are read from just past its mark (the last acknowledged position,
  // migrations/0012_outbox_mark.sql): the rows deleted by earlier acks, whose index entries stay
  // until VACUUM, lie at or below it and are never stepped over. Whether a workspace has a stable
  // row above its mark, and the batch's `max` rows, come from `outbox_page` (one ordered range scan
  // of the primary key that stops after the rows asked for, whatever the statistics: migration
  // 0012), and each row's event from one primary-key probe, so a take reads its batch however long
  // the backlog. The newest unstable row is a backward probe per lease row (LIMIT 1).
  // One row always: the batch (when a workspace had stable events), and for the wait of
  // `Settling` the stable bound and the outbox's highest unstable transaction.
  const takeNow = async (
    max: number,
  ): Promise<{ batch: OutboxBatch | null; stable: string; pending: string | null }> => {
    const receipt = randomUUID();
    const [row] = await sql.query<{
      stable: string;
      pending: string | null;
      workspace_id: string | null;
      events: DomainEvent[] | null;
      traces: Record<string, string> | null;
      last: string | null;
    }>(
      `WITH stable AS MATERIALIZED (SELECT ${STABLE_XID} AS xid),
       candidate AS (
         SELECT l.workspace_id FROM ${s}.outbox_leases l
         WHERE (l.lease_until IS NULL OR l.lease_until <= clock_timestamp())
           AND EXISTS (SELECT 1 FROM stable, ${s}.outbox_page(l.workspace_id, l.acked_xid, l.acked_seq, stable.xid, ${since}, 1))
         ORDER BY l.served_at NULLS FIRST, l.workspace_id
         LIMIT 1 FOR UPDATE OF l SKIP LOCKED
       ), leased AS (
         UPDATE ${s}.outbox_leases l SET receipt = $1, lease_until = clock_timestamp() + $4::bigint * interval '1 millisecond', served_at = clock_timestamp()
         FROM candidate WHERE l.workspace_id = candidate.workspace_id RETURNING l.workspace_id, l.acked_xid, l.acked_seq
       ), page AS (
         SELECT leased.workspace_id, rows.events, rows.traces, rows.last FROM leased, LATERAL (
           SELECT coalesce(json_agg(e.event ORDER BY o.xid, o.seq), '[]'::json) AS events,
                  json_object_agg(e.id, o.trace_context) FILTER (WHERE o.trace_context IS NOT NULL) AS traces,
                  (array_agg(o.xid::text || ':' || o.seq ORDER BY o.xid DESC, o.seq DESC))[1] AS last
           FROM stable, ${s}.outbox_page(leased.workspace_id, leased.acked_xid, leased.acked_seq, stable.xid, ${since}, $2) o,
             -- One primary-key probe per row (LIMIT 1 keeps it a nested loop, whatever the statistics).
             LATERAL (SELECT e.id, e.event FROM ${s}.events e
                      WHERE e.workspace_id = leased.workspace_id AND e.xid = o.xid AND e.seq = o.seq LIMIT 1) e
         ) rows
       )
       SELECT (SELECT xid::text FROM stable) AS stable,
              (SELECT max(newest.xid)::text FROM ${s}.outbox_leases l, stable, LATERAL (
                 SELECT o.xid FROM ${s}.outbox o WHERE o.workspace_id = l.workspace_id AND o.xid >= stable.xid
                 ORDER BY o.xid DESC, o.seq DESC LIMIT 1) newest
               WHERE NOT EXISTS (SELECT 1 FROM page)) AS pending,
              page.workspace_id, page.events, page.traces, page.last
       FROM (SELECT 1) one LEFT JOIN page ON true`,
      [receipt, max, retentionMs, leaseMs],
    );
    const { stable, pending } = row!;
    if (!row?.workspace_id || !row.events?.length) return { batch: null, stable, pending };
    // The receipt names the lease and the batch's last position ("lease:xid:seq"), for `ack`.
    const batch: OutboxBatch = { workspaceId: row.workspace_id, events: row.events, receipt: `${receipt}:${row.last}` };
    return { batch: row.traces ? { ...batch, traceContexts: row.traces } : batch, stable, pending };
  };
  return {
    take: async (max, waitMs) => {
      const deadline = Date.now() + waitMs;
      const settle = new Settling();
      for (;;) {
        const taken = await takeNow(max);
        if (taken.batch) return taken.batch;
        if (await settle.waited(taken)) continue;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return null;
        await wakeup.wait(Math.min(remaining, POLL_MS));
      }
    },
    // Deletes the batch's outbox rows (even when the lease was lost: they were handed on), moves
    // the workspace's mark up to the batch's last position (only forwards) and releases the lease
    // only while this batch still holds it. The batch was the workspace's oldest stable rows above
    // the mark, and no row can appear below a stable position later, so the rows between the mark
    // and its last position are its own (and rows past retention it skipped): a range of the
    // primary key, read in O(batch) however long the backlog and however many rows were deleted
    // before. A mark read before a concurrent ack moved it only widens that range to rows already
    // deleted; the row lock orders the two updates, and each compares with the mark it finds.
    ack: async (batch) => {
      const [lease, xid, seq] = batch.receipt.split(':');
      await sql.query(
        `WITH mark AS (SELECT acked_xid, acked_seq FROM ${s}.outbox_leases WHERE workspace_id = $1),
         acked AS (
           DELETE FROM ${s}.outbox o USING mark WHERE o.workspace_id = $1
             AND (o.xid, o.seq) > (mark.acked_xid, mark.acked_seq) AND (o.xid, o.seq) <= ($2::xid8, $3::bigint)
         )
         UPDATE ${s}.outbox_leases SET
           acked_xid = CASE WHEN (acked_xid, acked_seq) < ($2::xid8, $3::bigint) THEN $2::xid8 ELSE acked_xid END,
           acked_seq = CASE WHEN (acked_xid, acked_seq) < ($2::xid8, $3::bigint) THEN $3::bigint ELSE acked_seq END,
           receipt = CASE WHEN receipt = $4 THEN NULL ELSE receipt END,
           lease_until = CASE WHEN receipt = $4 THEN NULL ELSE lease_until END
         WHERE workspace_id = $1`,
        [batch.workspaceId, xid, seq, lease],
      );
      wakeup.notify();
    },
  };
}
