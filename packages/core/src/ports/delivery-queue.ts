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
}

/** A job handed to one worker; `receipt` is opaque and names the lease to `ack` or `retry`. */
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
  /** Leased and neither acknowledged nor rescheduled yet. */
  leased: number;
}

/**
 * Where delivery jobs wait for workers. Guarantees every adapter honours (checked by
 * `runDeliveryQueueContract` in `@parley/core/testing`):
 * - At-least-once: a job enqueued (or rescheduled) and resolved is kept until a worker acks it or
 *   reschedules it; durable across process restarts on adapters that say so (Redis), lost with the
 *   process in memory.
 * - Leases: a leased job is held by one worker at a time for the adapter's lease (`leaseMs`,
 *   default 30 s, longer than an attempt's 15 s deadline). A job neither acked nor rescheduled by
 *   then (its worker died) is handed out again, within 60 s of the lease's start.
 * - Due times: a retry becomes leasable in the `retry` lane within 1 s of `dueAt`.
 * - Lanes are independent: leasing `first` never returns a retry and is not slowed by any number of
 *   due retries.
 */
export interface DeliveryQueue {
  /** Adds jobs to the `first` lane, to be attempted now. */
  enqueue(jobs: readonly DeliveryJob[]): Promise<void>;
  /**
   * Leases up to `max` (≥ 1) ready jobs of `lane`, oldest first, waiting up to `waitMs` for one;
   * `[]` when none came in time.
   */
  lease(lane: DeliveryLane, max: number, waitMs: number): Promise<LeasedJob[]>;
  /** Done with a leased job (delivered, given up or dropped): it is never handed out again. */
  ack(leased: LeasedJob): Promise<void>;
  /**
   * In one atomic step, acks `leased` and schedules `next` to become ready in the `retry` lane at
   * `dueAt` (ms since the epoch).
   */
  retry(leased: LeasedJob, next: DeliveryJob, dueAt: number): Promise<void>;
  /** Current counts (O(1) per figure). */
  stats(): Promise<DeliveryQueueStats>;
}
