/**
 * @module The outbox relay (docs/events-and-webhooks.md#the-event-log): takes batches of recorded
 * events from the outbox, hands each batch to its consumers, then acknowledges it.
 */
import type { OutboxBatch, Storage } from '../ports/storage.js';
import { silentLogger, type WorkerLogger } from '../ports/logger.js';
import { pause } from './pause.js';

/**
 * Something done with every batch of recorded events before the batch is acknowledged: fanning
 * events out to webhook endpoints, queueing automatic agent replies. At-least-once: a batch whose
 * consumer threw is handed out again after the outbox lease, so a consumer may see an event twice
 * and must tolerate it (the delivery queue may hold a job twice; a reply is made once per message).
 * The relay itself tries a failed batch again within seconds (`RETRIES_IN_HAND`) before that.
 */
export interface OutboxConsumer {
  /** For logs, e.g. `deliveries`. */
  readonly name: string;
  /** Resolves with a count for the debug log (jobs queued); rejects to have the batch handed out again. */
  consume(batch: OutboxBatch): Promise<number>;
}

/** Options of {@link OutboxRelay}. */
export interface OutboxRelayOptions {
  /** Events per batch (default 100). */
  batchSize?: number;
  /** How long one take waits for events, in ms (default 1 000): bounds how long `stop()` waits for an idle loop. */
  pollMs?: number;
  logger?: WorkerLogger;
}

/** How long the relay pauses after its backend failed, in ms, before trying again. */
const FAULT_PAUSE_MS = 1_000;

/**
 * How many more times a batch whose relay failed is tried in hand, {@link FAULT_PAUSE_MS} apart,
 * before it is left to its lease (30 s by default). A fault as short as a reconnect then delays
 * the batch's webhooks by about a second, not by the lease; a batch that keeps failing (a consumer
 * that throws on one of its events) does not hold this process's relay for the other workspaces.
 */
const RETRIES_IN_HAND = 3;

/**
 * Moves the event log on: `storage.outbox.take` → every consumer, in order → `storage.outbox.ack`.
 * One loop per process; any number of processes share the outbox (each batch is leased to one).
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly logger: WorkerLogger;
  private readonly stopSignal = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly consumers: readonly OutboxConsumer[],
    options: OutboxRelayOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 100;
    this.pollMs = options.pollMs ?? 1_000;
    this.logger = options.logger ?? silentLogger;
  }

  /** Starts the loop; a no-op when started already or stopped. */
  start(): void {
    if (this.running || this.stopSignal.signal.aborted) return;
    this.running = this.loop();
  }

  /** Takes no new batch, lets the one in hand finish, and resolves once the loop ended. Safe to call more than once. */
  async stop(): Promise<void> {
    this.stopSignal.abort();
    await this.running;
  }

  /** Hands one batch to every consumer and acknowledges it; rejects (batch not acknowledged) when a consumer did. */
  async relay(batch: OutboxBatch): Promise<void> {
    const counts: Record<string, number> = {};
    for (const consumer of this.consumers) counts[consumer.name] = await consumer.consume(batch);
    await this.storage.outbox.ack(batch);
    this.logger.debug({ workspaceId: batch.workspaceId, events: batch.events.length, ...counts }, 'events relayed');
  }

  private async loop(): Promise<void> {
    const stopping = this.stopSignal.signal;
    // A taken batch whose relay failed, tried again while its lease still holds it for this process.
    let retrying: OutboxBatch | null = null;
    let retries = 0;
    while (!stopping.aborted) {
      let batch: OutboxBatch | null = retrying;
      try {
        batch ??= await this.storage.outbox.take(this.batchSize, this.pollMs);
        if (batch) await this.relay(batch);
        retrying = null;
      } catch (error) {
        retries = batch !== null && batch === retrying ? retries + 1 : 0;
        retrying = retries < RETRIES_IN_HAND ? batch : null;
        this.logger.error({ err: error, workspaceId: batch?.workspaceId }, 'outbox relay failed; retrying');
        await pause(FAULT_PAUSE_MS, stopping);
      }
    }
  }
}
