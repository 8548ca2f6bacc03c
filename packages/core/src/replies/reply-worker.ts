/**
 * @module The reply worker (README "Agents that reply"): leases reply requests, one conversation at
 * a time, and makes them with {@link ReplyService.generate}, renewing each lease while it works.
 */
import { systemClock, type Clock } from '../ports/clock.js';
import { silentLogger, type WorkerLogger } from '../ports/logger.js';
import type { LeasedReply, ReplyQueue } from '../ports/reply-queue.js';
import { pause } from '../workers/pause.js';
import { ReplyCancelledError } from './reply-cancel.js';
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
  /**
   * How often the queue is asked, while replies are being made, which of them were cancelled, in
   * ms (default 250: one round trip for all of them, so a cancelled reply stops within a second).
   */
  cancelCheckMs?: number;
  /** How long `stop()` lets replies in flight finish before aborting them, in ms (default 10 000). */
  drainMs?: number;
  /**
   * How long a request may wait for a worker with its agent's model before any worker takes it and
   * gives it up with `reply.failed`, in ms since it was asked (default 600 000, `REPLY_GIVE_UP_SECONDS`).
   */
  giveUpMs?: number;
  /** What a request's age is measured with: the clock its `requestedAt` was read from (default the system clock). */
  clock?: Clock;
  logger?: WorkerLogger;
  /** Told of each finished request (metrics, tests). */
  onOutcome?: (outcome: ReplyOutcome, leased: LeasedReply) => void;
}

const FAULT_PAUSE_MS = 1_000;

/**
 * Makes replies until stopped. Each leased request is generated while its lease is renewed every
 * `heartbeatMs`; a renewal that fails (the lease was lost: this worker stalled past it, and another
 * took the conversation over) aborts the generation, storing nothing. A finished request — stored,
 * given up or skipped — is acknowledged, which frees its conversation for the next request. A
 * request aborted by `stop()` is not acknowledged: once its lease ends it is made again, by another
 * worker or after a restart (on a durable backend; in memory it goes with the process).
 *
 * It leases only requests for the models its process has (`ReplyService.modelNames`), so a worker
 * with an agent's model takes its requests within one poll, however many workers without it run
 * (docs/replies-and-streams.md). A request whose agent moved to a model this process lacks after it
 * was asked is rerouted to that model's workers (and logged, naming it). Requests older than
 * `giveUpMs` are leased by any worker: made if it has the model, else given up with `reply.failed`.
 *
 * While it makes replies it asks the queue every `cancelCheckMs` which of them were cancelled
 * (`ReplyQueue.cancelled`, one round trip for all) and aborts those with a
 * {@link ReplyCancelledError}: the reply service stores what they had written and the request is
 * acknowledged (docs/replies-and-streams.md#stopping-a-reply). A request leased already cancelled
 * (its previous worker died) is acknowledged without being made.
 */
export class ReplyWorker {
  private readonly concurrency: number;
  private readonly heartbeatMs: number;
  private readonly pollMs: number;
  private readonly drainMs: number;
  private readonly giveUpMs: number;
  private readonly cancelCheckMs: number;
  private readonly logger: WorkerLogger;
  private readonly clock: Clock;
  private readonly stopping = new AbortController();
  /** Aborted when the drain time is up: generations still running then stop. */
  private readonly aborting = new AbortController();
  private running: Promise<void> | undefined;
  /** The replies being made, by receipt, each with what stops it when it is cancelled. */
  private readonly making = new Map<string, { leased: LeasedReply; cancel: AbortController }>();
  private cancelTimer: NodeJS.Timeout | undefined;
  private checkingCancels = false;

  constructor(private readonly options: ReplyWorkerOptions) {
    this.concurrency = options.concurrency ?? 8;
    if (!Number.isSafeInteger(this.concurrency) || this.concurrency < 1)
      throw new RangeError('concurrency: expected an integer ≥ 1.');
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
    this.pollMs = options.pollMs ?? 1_000;
    this.drainMs = options.drainMs ?? 10_000;
    this.giveUpMs = options.giveUpMs ?? 600_000;
    this.cancelCheckMs = options.cancelCheckMs ?? 250;
    if (!Number.isSafeInteger(this.cancelCheckMs) || this.cancelCheckMs < 1)
      throw new RangeError('cancelCheckMs: expected an integer ≥ 1.');
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
  }

  /** Starts the loop; a no-op when started already. */
  start(): void {
    if (this.running || this.stopping.signal.aborted) return;
    this.options.replies.preload();
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
        const claim = { models: this.options.replies.modelNames(), askedBefore: this.clock.now() - this.giveUpMs };
        leased = await this.options.queue.lease(this.pollMs, claim);
      } catch (error) {
        this.logger.error({ err: error }, 'leasing reply requests failed; retrying');
        await pause(FAULT_PAUSE_MS, this.stopping.signal);
        continue;
      }
      if (!leased) continue;
      const work: Promise<void> = this.work(leased)
        .catch((error: unknown) =>
          this.logger.error(
            { err: error, conversationId: leased.job.conversationId },
            'reply request failed; its lease will hand it out again',
          ),
        )
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
    }
    await Promise.allSettled(inFlight);
  }

  private async work(leased: LeasedReply): Promise<void> {
    if (leased.cancelled) {
      await this.options.queue.ack(leased);
      this.options.onOutcome?.('cancelled', leased);
      return;
    }
    const lost = new AbortController();
    const cancel = new AbortController();
    const signal = AbortSignal.any([lost.signal, this.aborting.signal, cancel.signal]);
    this.watchCancels(leased, cancel);
    const heartbeat = setInterval(() => {
      this.options.queue.extend(leased).then(
        (alive) => {
          if (!alive) lost.abort(new Error("The reply request's lease was lost."));
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
      this.unwatchCancels(leased);
    }
    if (outcome === 'aborted') return;
    if (outcome === 'deferred') {
      const model = await this.options.replies.agentModel(leased.job);
      if (this.clock.now() - leased.job.requestedAt < this.giveUpMs) return this.reroute(leased, model);
      const seconds = Math.round(this.giveUpMs / 1000);
      const named = model ?? leased.job.model;
      const error = `No worker with the agent's language model '${named}' took the reply within ${seconds} s (MODELS).`;
      await this.options.replies.giveUp(leased.job, error, this.logger);
      outcome = 'failed';
    }
    await this.options.queue.ack(leased);
    this.options.onOutcome?.(outcome, leased);
  }

  /** Asks the queue about `leased` from now on (with the others, every `cancelCheckMs`) and aborts `cancel` if it was cancelled. */
  private watchCancels(leased: LeasedReply, cancel: AbortController): void {
    this.making.set(leased.receipt, { leased, cancel });
    this.cancelTimer ??= setInterval(() => void this.checkCancels(), this.cancelCheckMs);
  }

  private unwatchCancels(leased: LeasedReply): void {
    this.making.delete(leased.receipt);
    if (this.making.size > 0) return;
    clearInterval(this.cancelTimer);
    this.cancelTimer = undefined;
  }

  private async checkCancels(): Promise<void> {
    if (this.checkingCancels || this.making.size === 0) return;
    this.checkingCancels = true;
    try {
      const receipts = await this.options.queue.cancelled([...this.making.values()].map((entry) => entry.leased));
      for (const receipt of receipts) {
        const entry = this.making.get(receipt);
        if (!entry || entry.cancel.signal.aborted) continue;
        const { workspaceId, conversationId, inReplyTo } = entry.leased.job;
        this.logger.info({ workspaceId, conversationId, inReplyTo }, 'reply cancelled: stopping it');
        entry.cancel.abort(new ReplyCancelledError());
      }
    } catch {
      // The queue is away: the next check asks again (the lease's renewal reports a lasting fault).
    } finally {
      this.checkingCancels = false;
    }
  }

  /**
   * Hands a request this process cannot make to the workers of its agent's model, which the agent
   * took after the request was queued (or which a request queued by Parley 0.1 never named).
   */
  private async reroute(leased: LeasedReply, model: string | null): Promise<void> {
    const { workspaceId, conversationId, inReplyTo } = leased.job;
    // Unchanged: leased as too old to wait (clocks apart); its lease runs out and it is given up later.
    if (model === null || model === leased.job.model) return;
    if (!(await this.options.queue.reroute(leased, model))) return;
    this.logger.warn(
      { workspaceId, conversationId, inReplyTo, model, giveUpMs: this.giveUpMs },
      `reply request handed to workers with model '${model}': this process has no language model for it (MODELS)`,
    );
    this.options.onOutcome?.('deferred', leased);
  }
}
