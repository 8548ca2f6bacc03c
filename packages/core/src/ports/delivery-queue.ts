/** @module The delivery queue port: webhook delivery jobs, leased to workers, retried on schedule. */
import type { DeliveryTrigger, DomainEvent } from '../types.js';

/**
 * One attempt to be made: deliver `event` to the workspace's endpoint `endpointId`. `id` is
 * unique per job (a retry is a new job with `attempt + 1`). The endpoint (URL, secret, enabled) is
 * read when the attempt is made, so a PATCH between attempts takes effect.
 */
export interface DeliveryJob {
  id: string;
  workspaceId: string;
  endpointId: string;
  /** What is sent: the recorded event (`webhook-id` is its id on every attempt). */
  event: DomainEvent;
  /** 1-based number of this attempt within its schedule. */
  attempt: number;
  trigger: DeliveryTrigger;
  /**
   * The W3C trace context the event was recorded in, or the operator's request made in (core's
   * `formatTraceContext`): each attempt's span joins that trace. Absent outside a trace. Adapters
   * store and hand it back as they do the rest of the job; a retry keeps it.
   */
  traceContext?: string;
}

/**
 * A job handed to one worker; `receipt` is opaque and names the queue entry to `ack` or `retry`
 * (it is the same for every lease of that entry, and good on every queue instance sharing the
 * backend).
 */
export interface LeasedJob {
  job: DeliveryJob;
  receipt: string;
}

/**
 * The two lanes of the queue (Hook0's model): `first` holds jobs enqueued to be attempted now
 * (first attempts, manual retries, recovery); `retry` holds scheduled retries once they are due.
 * Workers lease from each lane with their own concurrency, so first attempts never wait behind a
 * backlog of retries.
 */
export type DeliveryLane = 'first' | 'retry';

/** Counts of jobs, for metrics and benchmarks. */
export interface DeliveryQueueStats {
  /** Ready to be leased, per lane (a due retry counts as ready in `retry`). */
  first: number;
  retry: number;
  /** Retries not yet due. */
  scheduled: number;
  /** Leased and neither acknowledged nor rescheduled yet (expired leases not yet taken over included). */
  leased: number;
}

/**
 * Where delivery jobs wait for workers. Guarantees every adapter honours (checked by
 * `runDeliveryQueueContract` in `@parley/core/testing`):
 * - At-least-once: a job enqueued (or rescheduled) and resolved is kept until a worker acks it or
 *   reschedules it; durable across process restarts on adapters that say so (Redis), lost with the
 *   process in memory.
 * - Leases: a leased job is held by one worker at a time for the adapter's lease (`leaseMs`,
 *   default 30 s: longer than the second a worker may hold a job for a busy endpoint plus an
 *   attempt's 15 s deadline). A job neither acked nor rescheduled by then (its worker died) is
 *   handed out again, within 60 s of the lease's start.
 * - Due times: a retry becomes leasable in the `retry` lane within 1 s of `dueAt`.
 * - Lanes are independent: leasing `first` never returns a retry and is not slowed by any number of
 *   due retries.
 * - Once per job: the first `ack` or `retry` of a job wins; any later one (a duplicate, or the
 *   worker whose lease ran out finishing after another took over) does nothing, so an acked job
 *   never comes back and a job is rescheduled at most once.
 */
export interface DeliveryQueue {
  /** Adds jobs to the `first` lane, to be attempted now. */
  enqueue(jobs: readonly DeliveryJob[]): Promise<void>;
  /**
   * Leases up to `max` (≥ 1) ready jobs of `lane`, oldest first (a job whose lease ran out comes
   * before newer jobs), waiting up to `waitMs` for one; `[]` when none came in time. Resolves as
   * soon as a job is ready, with what is ready then (possibly fewer than `max`).
   * @throws RangeError for a `max` that is not an integer ≥ 1 or a negative `waitMs`.
   */
  lease(lane: DeliveryLane, max: number, waitMs: number): Promise<LeasedJob[]>;
  /**
   * Done with a leased job (delivered, given up or dropped): it is never handed out again. Also
   * after its lease ran out; nothing happens when the job was acked or rescheduled already.
   */
  ack(leased: LeasedJob): Promise<void>;
  /**
   * In one atomic step, acks `leased` and schedules `next` to become ready in the `retry` lane at
   * `dueAt` (ms since the epoch on the wall clock: adapters compare it with `Date.now()`, so a
   * test clock must not be used for it; a past `dueAt` makes it ready at once). Schedules nothing
   * when `leased` was acked or rescheduled already.
   */
  retry(leased: LeasedJob, next: DeliveryJob, dueAt: number): Promise<void>;
  /** Current counts (O(1) per figure). */
  stats(): Promise<DeliveryQueueStats>;
}
