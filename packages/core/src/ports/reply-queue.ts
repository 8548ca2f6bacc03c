/** @module The reply queue port: agent reply requests, one conversation at a time, leased to workers. */
import type { WorkspaceScope } from './scope.js';

/**
 * A request for an agent's reply in a conversation. `inReplyTo` is the message the reply answers
 * (the user message that asked for it, or the conversation's latest message for a reply asked
 * through the API; `null` when the conversation had none). `id` is unique per request.
 */
export interface ReplyJob {
  id: string;
  workspaceId: string;
  conversationId: string;
  inReplyTo: string | null;
  /** When it was asked, ms since the epoch. */
  requestedAt: number;
  /**
   * The agent model the reply is made with, as the agent named it when the reply was asked for:
   * only a worker whose claim names it leases the job (see {@link ReplyClaim}). `''` on a job
   * queued by Parley 0.1, which any worker leases.
   */
  model: string;
  /**
   * The W3C trace context of the request that asked for the reply (core's `formatTraceContext`):
   * the reply's spans continue its trace, in whichever process makes it. Absent when it was asked
   * outside a trace. Adapters store and hand it back as they do the rest of the job.
   */
  traceContext?: string;
}

/** What a worker leases: jobs for the models it can make replies with (docs/replies-and-streams.md). */
export interface ReplyClaim {
  /** The agent model names this worker has a language model for. */
  models: readonly string[];
  /**
   * Also jobs of any model asked before this time (ms since the epoch): requests no capable worker
   * took in time, which the worker gives up. Absent: none.
   */
  askedBefore?: number;
}

/** A job handed to one worker; `receipt` is opaque and names the lease to `extend` and `ack`. */
export interface LeasedReply {
  job: ReplyJob;
  receipt: string;
  /**
   * `true` when the job's reply was cancelled ({@link ReplyQueue.cancel}) while an earlier lease
   * of it was live and that lease then ended (its worker died): the worker acks it without making it.
   */
  cancelled?: boolean;
}

/** What {@link ReplyQueue.cancel} stopped, each list oldest first. */
export interface CancelledReplyJobs {
  /** Jobs that waited (or whose lease had ended): removed from the queue, never to be made. */
  removed: ReplyJob[];
  /**
   * The job under a live lease, being made: kept at its conversation's head and marked cancelled
   * until its worker acks it (the worker learns of it from {@link ReplyQueue.cancelled}). Empty
   * when no job is leased, or when it was marked by an earlier cancel already.
   */
  running: ReplyJob[];
}

/**
 * Where reply requests wait for workers: a FIFO per conversation (message groups, like SQS FIFO
 * queues or BullMQ groups). Guarantees every adapter honours (checked by `runReplyQueueContract`
 * in `@parley/core/testing`):
 * - Order and exclusivity per conversation: only the oldest unacknowledged job of a conversation
 *   can be leased, and only while no other lease on that conversation is live. So replies of one
 *   conversation are made one at a time, in the order asked, across any number of workers.
 * - At-least-once: an enqueued job is kept until a worker acks it. A lease lasts the adapter's
 *   `leaseMs` (default 30 s) and is renewed by `extend`; a lease neither renewed nor acked in time
 *   (its worker died) ends, and the job is handed out again (durable across restarts on Redis, lost
 *   with the process in memory).
 * - Conversations are served oldest request first, so one busy conversation never starves others.
 * - Routing: a job is leased only by a worker claiming its `model` (or, once older than the
 *   claim's `askedBefore`, by any worker), so a worker with the model takes it as soon as it asks,
 *   however many workers without the model ask meanwhile.
 * - Cancellation (docs/replies-and-streams.md#stopping-a-reply): `cancel` removes a conversation's
 *   waiting jobs and marks its leased one in one atomic step, durably; every instance's `cancelled`
 *   sees the mark at once. A marked job keeps its conversation until acked, so a reply asked for
 *   after the cancel still waits for the stopped one to be stored.
 */
export interface ReplyQueue {
  /** Appends a job to its conversation's FIFO. */
  enqueue(job: ReplyJob): Promise<void>;
  /**
   * Leases the oldest job that `claim` covers among the heads of conversations with no live
   * lease, waiting up to `waitMs` for one; `null` when none came in time. A head the claim does not
   * cover is left for another worker and holds its conversation's later jobs behind it. Finding
   * the job takes the same time however many jobs wait for other models.
   */
  lease(waitMs: number, claim: ReplyClaim): Promise<LeasedReply | null>;
  /**
   * Ends a live lease without removing its job, which from now on has `model` and is leased only
   * by workers that have it (the agent's model changed after the reply was asked for); the job
   * stays its conversation's next. `false` (nothing changed) when the lease was lost meanwhile.
   */
  reroute(leased: LeasedReply, model: string): Promise<boolean>;
  /** Renews a live lease for another `leaseMs`; `false` when it was lost (ended or acked already). */
  extend(leased: LeasedReply): Promise<boolean>;
  /**
   * Done with the job (stored, given up or dropped): removes it and frees its conversation for the
   * next job. `false` (nothing changed) when the lease was lost meanwhile.
   */
  ack(leased: LeasedReply): Promise<boolean>;
  /**
   * Stops the replies of a conversation, in one atomic step: removes its jobs that wait (and one
   * whose lease ended) and marks the job under a live lease as cancelled, keeping it until its
   * worker acks it. Resolves with what it removed and what it marked (`running`: a job marked
   * already is not listed again). Jobs enqueued afterwards are not affected.
   */
  cancel(scope: WorkspaceScope, conversationId: string): Promise<CancelledReplyJobs>;
  /**
   * The receipts, among `leases`, of the live leases whose job was marked by {@link cancel}: one
   * round trip for all of a worker's replies in flight, so a worker asks often (the reply worker:
   * every 250 ms while it makes replies) and stops a cancelled reply within a second.
   */
  cancelled(leases: readonly LeasedReply[]): Promise<string[]>;
  /** Jobs waiting or leased, across all conversations (for metrics and tests). */
  size(): Promise<number>;
  /**
   * Jobs of one conversation of the scope's workspace waiting or leased: 0 once its last request
   * was acknowledged (stored, given up or dropped). What tells a reply under way from one that
   * ended without a stored message (`GET /api/chat/:id/stream`). One read.
   */
  waiting(scope: WorkspaceScope, conversationId: string): Promise<number>;
}
