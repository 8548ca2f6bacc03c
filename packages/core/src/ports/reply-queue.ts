/** @module The reply queue port: agent reply requests, one conversation at a time, leased to workers. */

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
}

/** A job handed to one worker; `receipt` is opaque and names the lease to `extend` and `ack`. */
export interface LeasedReply {
  job: ReplyJob;
  receipt: string;
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
 */
export interface ReplyQueue {
  /** Appends a job to its conversation's FIFO. */
  enqueue(job: ReplyJob): Promise<void>;
  /**
   * Leases the oldest job of a conversation that has one and no live lease, waiting up to `waitMs`
   * for one; `null` when none came in time.
   */
  lease(waitMs: number): Promise<LeasedReply | null>;
  /** Renews a live lease for another `leaseMs`; `false` when it was lost (ended or acked already). */
  extend(leased: LeasedReply): Promise<boolean>;
  /**
   * Done with the job (stored, given up or dropped): removes it and frees its conversation for the
   * next job. `false` (nothing changed) when the lease was lost meanwhile.
   */
  ack(leased: LeasedReply): Promise<boolean>;
  /** Jobs waiting or leased, across all conversations (for metrics and tests). */
  size(): Promise<number>;
}
