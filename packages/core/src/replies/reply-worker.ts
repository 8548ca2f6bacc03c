/**
 * @module The reply worker (README "Agents that reply"): leases reply requests, one conversation at
 * a time, and makes them with {@link ReplyService.generate}, renewing each lease while it works.
 */
import { silentLogger, type WorkerLogger } from '../ports/logger.js';
import type { LeasedReply, ReplyQueue } from '../ports/reply-queue.js';
import { pause } from '../workers/pause.js';
import type { ReplyOutcome, ReplyService } from './reply-service.js';

/** Options of {@link ReplyWorker}. */
export interface ReplyWorkerOptions {
  replies: ReplyService;
  queue: ReplyQueue;
  /** Replies generated at once, each of another conversation (default 8). */
  concurrency?: number;
  /** How often a lease is renewed while its reply is generated, in ms (default 10 000: a third of the default 30 s lease). */
  heartbeatMs?: number;
  /** How long one lease waits for work, in ms (default 1 000): bounds how long `stop()` waits for an idle loop. */
  pollMs?: number;
  /** How long `stop()` lets replies in flight finish before aborting them, in ms (default 10 000). */
  drainMs?: number;
  /**
   * How long a request no worker could make (its agent's model is configured nowhere that leased
   * it) waits before it is given up with `reply.failed`, in ms since it was asked (default 600 000,
   * `REPLY_GIVE_UP_SECONDS`).
   */
  giveUpMs?: number;
  logger?: WorkerLogger;
  /** Told of each finished request (metrics, tests). */
  onOutcome?: (outcome: ReplyOutcome, leased: LeasedReply) => void;
}

const FAULT_PAUSE_MS = 1_000;
/** At most one "left for another worker" warning per conversation in this interval, in ms. */
const DEFER_WARN_EVERY_MS = 60_000;

/**
 * Makes replies until stopped. Each leased request is generated while its lease is renewed every
 * `heartbeatMs`; a renewal that fails (the lease was lost: this worker stalled past it, and another
 * took the conversation over) aborts the generation, storing nothing. A finished request — stored,
 * given up or skipped — is acknowledged, which frees its conversation for the next request. A
 * request aborted by `stop()` is not acknowledged: once its lease ends it is made again, by another
 * worker or after a restart (on a durable backend; in memory it goes with the process).
 *
 * Only a worker that can make a reply acknowledges its request: one whose process has no language
 * model for the agent's `model` leaves the lease to run out (the queue's lease, 30 s by default),
 * so a worker that has the model takes the request over, and says so in its log (at most once a
 * minute per conversation). A request nobody could make for `giveUpMs` is given up with `reply.failed`.
 */
export class ReplyWorker {
  private readonly concurrency: number;
  private readonly heartbeatMs: number;
  private readonly pollMs: number;
  private readonly drainMs: number;
  private readonly giveUpMs: number;
  /** When each conversation's "left for another worker" warning was last logged. */
  private readonly deferWarned = new Map<string, number>();
  private readonly logger: WorkerLogger;
  private readonly stopping = new AbortController();
  /** Aborted when the drain time is up: generations still running then stop. */
  private readonly aborting = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: ReplyWorkerOptions) {
    this.concurrency = options.concurrency ?? 8;
    if (!Number.isSafeInteger(this.concurrency) || this.concurrency < 1) throw new RangeError('concurrency: expected an integer ≥ 1.');
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
    this.pollMs = options.pollMs ?? 1_000;
    this.drainMs = options.drainMs ?? 10_000;
    this.giveUpMs = options.giveUpMs ?? 600_000;
    this.logger = options.logger ?? silentLogger;
  }

  /** Starts the loop; a no-op when started already. */
  start(): void {
    if (this.running || this.stopping.signal.aborted) return;
    this.running = this.loop();
  }

  /**
   * Takes no new request, lets the replies in flight finish for up to `drainMs`, then aborts the
   * rest (not acknowledged: they are made again later). Resolves once all work ended.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    const timer = setTimeout(() => this.aborting.abort(), this.drainMs);
    try {
      await this.running;
    } finally {
      clearTimeout(timer);
    }
  }

  private async loop(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (!this.stopping.signal.aborted) {
      if (inFlight.size >= this.concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      let leased: LeasedReply | null;
      try {
        leased = await this.options.queue.lease(this.pollMs);
      } catch (error) {
        this.logger.error({ err: error }, 'leasing reply requests failed; retrying');
        await pause(FAULT_PAUSE_MS, this.stopping.signal);
        continue;
      }
      if (!leased) continue;
      const work: Promise<void> = this.work(leased)
        .catch((error: unknown) =>
          this.logger.error({ err: error, conversationId: leased.job.conversationId }, 'reply request failed; its lease will hand it out again'),
        )
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
    }
    await Promise.allSettled(inFlight);
  }

  private async work(leased: LeasedReply): Promise<void> {
    const lost = new AbortController();
    const signal = AbortSignal.any([lost.signal, this.aborting.signal]);
    const heartbeat = setInterval(() => {
      this.options.queue.extend(leased).then(
        (alive) => {
          if (!alive) lost.abort(new Error('The reply request\'s lease was lost.'));
        },
        // A failed renewal is retried at the next beat; the lease may still be alive.
        () => {},
      );
    }, this.heartbeatMs);
    let outcome: ReplyOutcome;
    try {
      outcome = await this.options.replies.generate(leased.job, signal, this.logger);
    } finally {
      clearInterval(heartbeat);
    }
    if (outcome === 'aborted') return;
    if (outcome === 'deferred') {
      if (Date.now() - leased.job.requestedAt < this.giveUpMs) return this.leaveForAnother(leased);
      const seconds = Math.round(this.giveUpMs / 1000);
      await this.options.replies.giveUp(leased.job, `No worker with the agent's language model took the reply within ${seconds} s (MODELS).`, this.logger);
      outcome = 'failed';
    }
    await this.options.queue.ack(leased);
    this.options.onOutcome?.(outcome, leased);
  }

  /** Leaves a request this process cannot make unacknowledged: its lease runs out and another worker takes it. */
  private leaveForAnother(leased: LeasedReply): void {
    const key = `${leased.job.workspaceId} ${leased.job.conversationId}`;
    const last = this.deferWarned.get(key) ?? 0;
    if (Date.now() - last >= DEFER_WARN_EVERY_MS) {
      for (const [other, at] of this.deferWarned) if (Date.now() - at >= DEFER_WARN_EVERY_MS) this.deferWarned.delete(other);
      this.deferWarned.set(key, Date.now());
      this.logger.warn(
        { workspaceId: leased.job.workspaceId, conversationId: leased.job.conversationId, inReplyTo: leased.job.inReplyTo, giveUpMs: this.giveUpMs },
        "reply request left for a worker with the agent's language model: none is configured in this process (MODELS)",
      );
    }
    this.options.onOutcome?.('deferred', leased);
  }
}
