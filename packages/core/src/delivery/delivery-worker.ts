/**
 * @module The delivery worker (docs/events-and-webhooks.md): leases jobs from the delivery queue
 * and makes the attempts, each lane with its own concurrency, until stopped.
 */
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../ports/clock.js';
import type { DeliveryJob, DeliveryLane, DeliveryQueue, LeasedJob } from '../ports/delivery-queue.js';
import { createUlidGenerator, type IdGenerator } from '../ports/ids.js';
import { silentLogger, type WorkerLogger } from '../ports/logger.js';
import type { Change, Condition, Storage } from '../ports/storage.js';
import type { WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js';
import { subscribesTo, type WebhookEndpointRecord } from '../types.js';
import { attemptDelivery, isSuccess, type AttemptContext } from './attempt.js';
import { pause } from '../workers/pause.js';
import {
  DEFAULT_WEBHOOK_RETRY_DELAYS,
  FAILING_DISABLE_AFTER_MS,
  checkRetryDelays,
  retryDelayMs,
} from './retry-schedule.js';
import type { WorkspaceScope } from '../ports/scope.js';
import { Tracing } from '../tracing/tracing.js';
import { contextFromTrace } from '../tracing/trace-context.js';
import { recordWebhookOutcome, webhookAttemptSpan } from '../tracing/gen-ai.js';

/** The worker changes an endpoint's state only while it is enabled: a disable is never undone, nor a PATCH's. */
const WHILE_ENABLED: Condition<WebhookEndpointRecord> = { field: 'enabled', equals: true };

/** Options of {@link DeliveryWorker}. */
export interface DeliveryWorkerOptions {
  storage: Storage;
  queue: DeliveryQueue;
  transport: WebhookTransport;
  clock?: Clock;
  ids?: IdGenerator;
  /** Seconds between attempts (default {@link DEFAULT_WEBHOOK_RETRY_DELAYS}); attempts = 1 + its length. */
  retryDelaysSeconds?: readonly number[];
  /** Attempts in flight at once per lane (default `first` 16, `retry` 4). */
  concurrency?: Partial<Record<DeliveryLane, number>>;
  /**
   * Attempts in flight at once to one endpoint, both lanes together (default half the `first`
   * lane's, at least 1): a receiver that hangs holds at most this many slots, never all of them.
   */
  perEndpoint?: number;
  /** How long one lease waits for work, in ms (default 1 000): bounds how long `stop()` waits for an idle loop. */
  pollMs?: number;
  logger?: WorkerLogger;
  /**
   * Called after each attempt is settled (metrics): never throws into the worker, whatever it
   * does. Jobs dropped unsent (endpoint gone, disabled or unsubscribed) make no attempt and no call.
   */
  onAttempt?: (report: DeliveryAttemptReport) => void;
  /** Source of jitter, [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Where each attempt's span goes (default the OpenTelemetry API's global tracer, a no-op without an SDK). */
  tracing?: Tracing;
}

/** What became of an attempt: the outcomes {@link DeliveryAttemptReport} reports. */
export const DELIVERY_OUTCOMES = ['delivered', 'retry_scheduled', 'given_up', 'endpoint_disabled'] as const;
/** One of {@link DELIVERY_OUTCOMES}. */
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/**
 * One settled attempt: `delivered` (a 2xx), `retry_scheduled`, `given_up` (the last attempt, or a
 * failed manual one) or `endpoint_disabled` (410 Gone, or failing for 5 days). `durationMs` is the
 * attempt's own time; `lagMs`, for an event's first scheduled attempt only, how long after the
 * event occurred the attempt started (how far behind the first-attempt lane runs).
 */
export interface DeliveryAttemptReport {
  outcome: DeliveryOutcome;
  trigger: DeliveryJob['trigger'];
  durationMs: number;
  lagMs?: number;
}

/** How long a loop pauses after its backend failed, in ms, before trying again. */
const FAULT_PAUSE_MS = 1_000;
/** How long a job is put off when its endpoint already has `perEndpoint` attempts in flight, in ms. */
const BUSY_ENDPOINT_DEFER_MS = 1_000;
/**
 * How long a job leased while its endpoint is at its limit may wait in the lane for that
 * endpoint's next free slot, in ms: no longer than putting it off would delay it. With the
 * attempt's 15 s deadline after it, well inside the queue's default 30 s lease.
 */
const HOLD_MS = BUSY_ENDPOINT_DEFER_MS;
/** How long a lane waits (unless a slot frees first) after a batch of which every job was put off, in ms. */
const BUSY_BACKOFF_MS = 10;

/**
 * Delivers webhooks: one loop per lane (`first`, `retry`) leasing jobs up to its concurrency (the
 * jobs come from the outbox relay's `WebhookFanOut` and from operator actions). Per attempt the
 * endpoint is read afresh: gone, disabled or — for a `scheduled` job — no longer subscribed to the
 * event's type → the job is acked without sending or logging;
 * otherwise the event is signed, sent and logged; a 2xx acks (and clears `failingSince`), a 410
 * disables the endpoint (`gone`); any other outcome of a `scheduled` or `recover` job is retried per
 * the schedule (±10 % jitter, a later `Retry-After` wins, at most 24 h) until the last attempt, and
 * an endpoint failing for 5 days is disabled (`failing`). A `manual` job is one attempt.
 *
 * One endpoint never takes more than `perEndpoint` slots. A job leased while its endpoint is that
 * busy waits in the lane for the endpoint's next free slot, if one of its attempts started or
 * ended within {@link HOLD_MS} — up to `perEndpoint` such jobs per endpoint, each at most
 * {@link HOLD_MS}, and counted in the lane's concurrency. Otherwise, or when that time runs out,
 * it is put off by a second (rescheduled into the `retry` lane, same attempt, not logged), so a
 * receiver that hangs for its full 15 s deadline delays only its own deliveries. A lane finishes
 * its put-offs before it leases again, and pauses {@link BUSY_BACKOFF_MS} (or until a slot frees)
 * after a batch it could neither start nor hold any of (docs/events-and-webhooks.md).
 *
 * Storage or queue faults never lose a job: an attempt that could not be acked or rescheduled is
 * handed out again when its lease ends (at-least-once; the same `webhook-id` every time).
 */
export class DeliveryWorker {
  private readonly context: AttemptContext;
  private readonly queue: DeliveryQueue;
  private readonly delays: readonly number[];
  private readonly concurrency: Record<DeliveryLane, number>;
  private readonly pollMs: number;
  private readonly logger: WorkerLogger;
  private readonly random: () => number;
  private readonly onAttempt: ((report: DeliveryAttemptReport) => void) | undefined;
  private readonly tracing: Tracing;
  private readonly perEndpoint: number;
  /** Attempts in flight per `workspaceId endpointId`. */
  private readonly busy = new Map<string, number>();
  /** When an attempt last started or ended, per endpoint with attempts in flight (`performance.now()`, ms). */
  private readonly progress = new Map<string, number>();
  private readonly stopSignal = new AbortController();
  private running: Promise<void> | undefined;

  constructor(options: DeliveryWorkerOptions) {
    const clock = options.clock ?? systemClock;
    this.context = {
      storage: options.storage,
      transport: options.transport,
      clock,
      ids: options.ids ?? createUlidGenerator(() => clock.now()),
    };
    this.queue = options.queue;
    this.delays = options.retryDelaysSeconds ?? DEFAULT_WEBHOOK_RETRY_DELAYS;
    checkRetryDelays(this.delays);
    this.concurrency = { first: options.concurrency?.first ?? 16, retry: options.concurrency?.retry ?? 4 };
    for (const lane of ['first', 'retry'] as const) {
      if (!Number.isInteger(this.concurrency[lane]) || this.concurrency[lane] < 1)
        throw new RangeError(`concurrency.${lane}: expected an integer ≥ 1.`);
    }
    this.perEndpoint = options.perEndpoint ?? Math.max(1, Math.floor(this.concurrency.first / 2));
    if (!Number.isInteger(this.perEndpoint) || this.perEndpoint < 1)
      throw new RangeError('perEndpoint: expected an integer ≥ 1.');
    this.pollMs = options.pollMs ?? 1_000;
    this.logger = options.logger ?? silentLogger;
    this.random = options.random ?? Math.random;
    this.onAttempt = options.onAttempt;
    this.tracing = options.tracing ?? new Tracing();
  }

  /** Starts the loops; a no-op when started already. */
  start(): void {
    if (this.running || this.stopSignal.signal.aborted) return;
    this.running = Promise.all([this.lane('first'), this.lane('retry')]).then(() => undefined);
  }

  /**
   * Takes no new work, lets the attempts in flight finish (each is bounded by the transport's
   * 15 s deadline) and resolves once all loops ended. Safe to call more than once.
   */
  async stop(): Promise<void> {
    this.stopSignal.abort();
    await this.running;
  }

  private get stopping(): boolean {
    return this.stopSignal.signal.aborted;
  }

  private async lane(lane: DeliveryLane): Promise<void> {
    const limit = this.concurrency[lane];
    const inFlight = new Set<Promise<void>>();
    /** Per endpoint (`workspaceId endpointId`), this lane's jobs held for its next free slot, oldest first. */
    const held = new Map<string, Array<{ item: LeasedJob; timer: NodeJS.Timeout }>>();
    let heldCount = 0;
    /** Put-offs not finished yet: the lane leases nothing until they are. */
    const puttingOff = new Set<Promise<void>>();
    // Resolved when a slot frees (an attempt ends, a held job is put off), so a full lane wakes without racing every attempt in flight.
    let slotFreed: (() => void) | undefined;
    const wake = () => {
      slotFreed?.();
      slotFreed = undefined;
    };
    /** Resolves when a slot of this lane frees, or once `ms` passed when given. */
    const nextSlot = (ms?: number) =>
      new Promise<void>((resolve) => {
        const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
        slotFreed = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    const putOff = (item: LeasedJob) => {
      const done: Promise<void> = this.deferBusy(item).finally(() => puttingOff.delete(done));
      puttingOff.add(done);
    };
    /** Takes `entry` (or else the oldest job held for `key`) out of the hold and stops its timer. */
    const unhold = (key: string, entry?: { item: LeasedJob; timer: NodeJS.Timeout }): LeasedJob | undefined => {
      const queue = held.get(key);
      const at = entry ? (queue?.indexOf(entry) ?? -1) : 0;
      const [taken] = queue && at >= 0 ? queue.splice(at, 1) : [];
      if (!taken) return undefined;
      if (queue!.length === 0) held.delete(key);
      clearTimeout(taken.timer);
      heldCount -= 1;
      return taken.item;
    };
    /** Starts the attempt of `item` in a slot of its endpoint (`key`) already counted in `this.busy`. */
    const start = (item: LeasedJob, key: string): void => {
      this.progress.set(key, performance.now());
      const work: Promise<void> = this.work(item)
        .catch((error: unknown) =>
          this.logger.error(
            { err: error, jobId: item.job.id, endpointId: item.job.endpointId },
            'delivery attempt failed; its lease will hand it out again',
          ),
        )
        .finally(() => {
          inFlight.delete(work);
          this.progress.set(key, performance.now());
          // The endpoint's slot passes to the job held longest for it, or is given back.
          const next = unhold(key);
          if (next) start(next, key);
          else {
            const left = (this.busy.get(key) ?? 1) - 1;
            if (left > 0) this.busy.set(key, left);
            else {
              this.busy.delete(key);
              this.progress.delete(key);
            }
          }
          wake();
        });
      inFlight.add(work);
    };
    while (!this.stopping) {
      if (puttingOff.size > 0) {
        // Busy endpoints' jobs are put off before the lane leases more: leasing and putting off at
        // the queue's full speed would starve the attempts in flight of the very connection and
        // event loop they need to end.
        await Promise.all(puttingOff);
        continue;
      }
      if (inFlight.size + heldCount >= limit) {
        await nextSlot();
        continue;
      }
      let leased: LeasedJob[];
      try {
        leased = await this.queue.lease(lane, limit - inFlight.size - heldCount, this.pollMs);
      } catch (error) {
        this.logger.error({ err: error, lane }, 'leasing delivery jobs failed; retrying');
        await pause(FAULT_PAUSE_MS, this.stopSignal.signal);
        continue;
      }
      // Jobs leased while stopping are still worked: they are ours until the lease ends anyway.
      let startedNothing = leased.length > 0;
      for (const item of leased) {
        const key = `${item.job.workspaceId} ${item.job.endpointId}`;
        const busy = this.busy.get(key) ?? 0;
        if (busy < this.perEndpoint) {
          this.busy.set(key, busy + 1);
          start(item, key);
          startedNothing = false;
          continue;
        }
        // The endpoint is at its limit. While its attempts move (one started or ended within
        // HOLD_MS), the job waits here for the next slot that frees, at most HOLD_MS: no longer
        // than being put off would delay it, and without the queue's work of putting it off and
        // leasing it again. Behind an endpoint that stopped answering, it is put off at once.
        const waiting = held.get(key)?.length ?? 0;
        if (waiting < this.perEndpoint && performance.now() - (this.progress.get(key) ?? -Infinity) < HOLD_MS) {
          const entry = {
            item,
            timer: setTimeout(() => {
              if (!unhold(key, entry)) return;
              putOff(item);
              wake();
            }, HOLD_MS),
          };
          if (waiting === 0) held.set(key, [entry]);
          else held.get(key)!.push(entry);
          heldCount += 1;
          startedNothing = false;
          continue;
        }
        putOff(item);
      }
      // After a batch it could neither start nor hold any of, the lane waits for its put-offs,
      // then until a slot frees or BUSY_BACKOFF_MS passed.
      if (startedNothing && !this.stopping) {
        await Promise.all(puttingOff);
        await nextSlot(BUSY_BACKOFF_MS);
      }
    }
    // Stopping: jobs still held are put off now rather than waiting for a slot.
    for (const key of [...held.keys()]) {
      for (let item = unhold(key); item; item = unhold(key)) putOff(item);
    }
    await Promise.allSettled([...inFlight, ...puttingOff]);
  }

  /** Puts a job off (same attempt, a new job id) because its endpoint is at its limit. */
  private deferBusy(leased: LeasedJob): Promise<void> {
    const next = { ...leased.job, id: randomUUID() };
    return this.queue.retry(leased, next, this.context.clock.now() + BUSY_ENDPOINT_DEFER_MS).catch((error: unknown) => {
      // The lease runs out and the job is handed out again: nothing is lost.
      this.logger.error(
        { err: error, jobId: leased.job.id, endpointId: leased.job.endpointId },
        'putting off a job of a busy endpoint failed',
      );
    });
  }

  /**
   * Makes the attempt of one leased job and settles it (ack or reschedule), in the attempt's span,
   * which continues the trace the job was queued in (docs/observability.md#traces).
   */
  private work(leased: LeasedJob): Promise<void> {
    const { job } = leased;
    return this.tracing.inSpan(...webhookAttemptSpan(job), contextFromTrace(job.traceContext), async (span) => {
      const outcome = await this.attempt(leased);
      recordWebhookOutcome(span, outcome.status, outcome.outcome);
    });
  }

  private async attempt(leased: LeasedJob): Promise<{ status: number | null; outcome: DeliveryOutcome | 'dropped' }> {
    const { job } = leased;
    const { storage, clock } = this.context;
    const scope = { workspaceId: job.workspaceId };
    const endpoint = await storage.webhookEndpoints.get(scope, job.endpointId);
    // Gone, disabled, or (for the schedule) no longer subscribed to this type: dropped unsent.
    if (
      !endpoint ||
      !endpoint.enabled ||
      (job.trigger === 'scheduled' && !subscribesTo(endpoint.events, job.event.type))
    ) {
      await this.queue.ack(leased);
      return { status: null, outcome: 'dropped' };
    }
    const startedAt = clock.now();
    // The retry is planned before the attempt is recorded, so its log entry says when it is due.
    let retryAt: number | null = null;
    const { entry, response } = await attemptDelivery(
      this.context,
      scope,
      endpoint,
      job.event,
      job.attempt,
      job.trigger,
      undefined,
      (answer) => {
        retryAt = this.plannedRetry(job, endpoint, answer);
        return retryAt;
      },
    );
    const report = (outcome: DeliveryOutcome) => {
      const lagMs =
        job.attempt === 1 && job.trigger === 'scheduled'
          ? Math.max(0, startedAt - Date.parse(job.event.occurredAt))
          : undefined;
      try {
        this.onAttempt?.({
          outcome,
          trigger: job.trigger,
          durationMs: entry.durationMs,
          ...(lagMs !== undefined && { lagMs }),
        });
      } catch {
        // A metrics hook must never disturb delivery.
      }
    };
    const fields = {
      workspaceId: job.workspaceId,
      endpointId: job.endpointId,
      eventId: job.event.id,
      attempt: job.attempt,
      trigger: job.trigger,
      status: entry.status,
      durationMs: entry.durationMs,
    };
    if (isSuccess(response.status)) {
      if (endpoint.failingSince !== null)
        await this.updateEndpoint(scope, endpoint.id, { set: { failingSince: null }, keepVersion: true });
      await this.queue.ack(leased);
      report('delivered');
      this.logger.debug(fields, 'webhook delivered');
      return { status: entry.status, outcome: 'delivered' };
    }
    const now = clock.now();
    const nowIso = new Date(now).toISOString();
    if (response.status === 410) {
      await this.updateEndpoint(scope, endpoint.id, {
        set: { enabled: false, disabledReason: 'gone' },
        touch: nowIso,
        where: [WHILE_ENABLED],
      });
      await this.queue.ack(leased);
      report('endpoint_disabled');
      this.logger.warn(fields, 'webhook endpoint answered 410 Gone: disabled');
      return { status: entry.status, outcome: 'endpoint_disabled' };
    }
    // Two conditional writes, each one atomic step: start the run of failures, or else end it
    // by disabling the endpoint once its first failure is 5 days old.
    const { webhookEndpoints } = storage;
    let result = await webhookEndpoints.update(scope, endpoint.id, {
      set: { failingSince: nowIso },
      keepVersion: true,
      where: [WHILE_ENABLED, { field: 'failingSince', equals: null }],
    });
    if (result?.outcome === 'unmet' && result.record.enabled) {
      result = await webhookEndpoints.update(scope, endpoint.id, {
        set: { enabled: false, disabledReason: 'failing' },
        touch: nowIso,
        where: [
          WHILE_ENABLED,
          { field: 'failingSince', before: new Date(now - FAILING_DISABLE_AFTER_MS + 1).toISOString() },
        ],
      });
    }
    const after = result && result.record;
    if (!after || !after.enabled) {
      if (after?.disabledReason === 'failing')
        this.logger.warn(fields, 'webhook endpoint failing for 5 days: disabled');
      await this.queue.ack(leased);
      report('endpoint_disabled');
      return { status: entry.status, outcome: 'endpoint_disabled' };
    }
    if (retryAt === null) {
      await this.queue.ack(leased);
      report('given_up');
      this.logger.warn(
        { ...fields, error: entry.error },
        job.trigger === 'manual' ? 'manual webhook attempt failed' : 'webhook delivery given up after the last attempt',
      );
      return { status: entry.status, outcome: 'given_up' };
    }
    await this.queue.retry(leased, { ...job, id: randomUUID(), attempt: job.attempt + 1 }, retryAt);
    report('retry_scheduled');
    this.logger.info(
      { ...fields, error: entry.error, retryInMs: Math.max(0, retryAt - now) },
      'webhook attempt failed; retry scheduled',
    );
    return { status: entry.status, outcome: 'retry_scheduled' };
  }

  /**
   * When the next attempt is due after `response` (ms since the epoch), or `null`: none after a
   * 2xx, a 410, a manual retry, the last attempt, or for an endpoint failing 5 days (disabled next).
   */
  private plannedRetry(job: DeliveryJob, endpoint: WebhookEndpointRecord, response: WebhookResponse): number | null {
    const now = this.context.clock.now();
    if (isSuccess(response.status) || response.status === 410 || job.trigger === 'manual') return null;
    if (endpoint.failingSince !== null && now - Date.parse(endpoint.failingSince) >= FAILING_DISABLE_AFTER_MS)
      return null;
    const delay = retryDelayMs(this.delays, job.attempt, response.retryAfterMs, this.random);
    return delay === null ? null : now + delay;
  }

  /** Applies `change` to the endpoint (see the storage port's `Change`): the endpoint as stored after it, `null` when gone. */
  private async updateEndpoint(
    scope: WorkspaceScope,
    id: string,
    change: Change<WebhookEndpointRecord>,
  ): Promise<WebhookEndpointRecord | null> {
    const result = await this.context.storage.webhookEndpoints.update(scope, id, change);
    return result && result.record;
  }
}
