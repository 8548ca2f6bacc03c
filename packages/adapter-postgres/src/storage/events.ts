/**
 * @module The event log and its outbox on PostgreSQL. Events are read in each workspace's commit
 * order (`seq`, see migrations/0001_init.sql); the outbox hands one workspace's oldest events to
 * one taker at a time, claiming the workspace's lease row with FOR UPDATE SKIP LOCKED.
 */
import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '@parley/core';
import type { EventOutbox, EventStore, OutboxBatch } from '@parley/core/adapter';
import { retained, type StoreContext } from './context.js';

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
    // Without `type`: a range scan of the primary key (workspace_id, seq); with it, of events_by_type.
    list: async ({ workspaceId }, { after, limit, type }) => {
      const [row] = await sql.query<{ cursor: number | null; rows: DomainEvent[] }>(
        `WITH cursor AS (SELECT CASE WHEN $3::text IS NULL THEN 0 ELSE (SELECT seq FROM ${s}.events WHERE workspace_id = $1 AND id = $3 AND ${live}) END AS seq)
         SELECT (SELECT seq FROM cursor) AS cursor,
                coalesce((SELECT json_agg(event ORDER BY seq) FROM (
                  SELECT seq, event FROM ${s}.events
                  WHERE workspace_id = $1 AND seq > (SELECT seq FROM cursor) AND ${live} AND ($4::text IS NULL OR type = $4)
                  ORDER BY seq LIMIT $5) page), '[]'::json) AS rows`,
        [workspaceId, retentionMs, after ?? null, type ?? null, limit + 1],
      );
      if (!row || row.cursor === null) return null;
      return { events: row.rows.slice(0, limit), hasMore: row.rows.length > limit };
    },
  };
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
  const live = (column: string) => retained(column, '$3');
  // Served workspaces go to the back (served_at), so one busy workspace cannot starve the others.
  const takeNow = async (max: number): Promise<OutboxBatch | null> => {
    const receipt = randomUUID();
    const [row] = await sql.query<{
      workspace_id: string;
      events: DomainEvent[];
      traces: Record<string, string> | null;
    }>(
      `WITH candidate AS (
         SELECT l.workspace_id FROM ${s}.outbox_leases l
         WHERE (l.lease_until IS NULL OR l.lease_until <= clock_timestamp())
           AND EXISTS (SELECT 1 FROM ${s}.outbox o WHERE o.workspace_id = l.workspace_id AND ${live('o.recorded_at')})
         ORDER BY l.served_at NULLS FIRST, l.workspace_id
         LIMIT 1 FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE ${s}.outbox_leases l SET receipt = $1, lease_until = clock_timestamp() + $4::bigint * interval '1 millisecond', served_at = clock_timestamp()
         FROM candidate WHERE l.workspace_id = candidate.workspace_id RETURNING l.workspace_id
       )
       SELECT leased.workspace_id, page.events, page.traces FROM leased, LATERAL (
         SELECT coalesce(json_agg(event ORDER BY seq), '[]'::json) AS events,
                json_object_agg(id, trace_context) FILTER (WHERE trace_context IS NOT NULL) AS traces
         FROM (
           SELECT e.seq, e.id, e.event, o.trace_context FROM ${s}.outbox o JOIN ${s}.events e ON e.workspace_id = o.workspace_id AND e.seq = o.seq
           WHERE o.workspace_id = leased.workspace_id AND ${live('o.recorded_at')} ORDER BY o.seq LIMIT $2
         ) rows
       ) page`,
      [receipt, max, retentionMs, leaseMs],
    );
    if (!row || row.events.length === 0) return null;
    const batch: OutboxBatch = { workspaceId: row.workspace_id, events: row.events, receipt };
    return row.traces ? { ...batch, traceContexts: row.traces } : batch;
  };
  return {
    take: async (max, waitMs) => {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const batch = await takeNow(max);
        if (batch) return batch;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return null;
        await wakeup.wait(Math.min(remaining, POLL_MS));
      }
    },
    // Deletes the batch's outbox rows (even when the lease was lost: they were handed on) and
    // releases the lease only while this batch still holds it.
    ack: async (batch) => {
      await sql.query(
        `WITH acked AS (
           DELETE FROM ${s}.outbox WHERE workspace_id = $1 AND seq IN (SELECT seq FROM ${s}.events WHERE workspace_id = $1 AND id = ANY($2::text[]))
         )
         UPDATE ${s}.outbox_leases SET receipt = NULL, lease_until = NULL WHERE workspace_id = $1 AND receipt = $3`,
        [batch.workspaceId, batch.events.map((event) => event.id), batch.receipt],
      );
      wakeup.notify();
    },
  };
}
