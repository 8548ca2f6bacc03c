/**
 * @module The outbox on Redis: handing recorded events on, one workspace's batch at a time, across
 * every process sharing the server or Cluster (README, "Events and the outbox").
 *
 * Each workspace's outbox is a LIST in its own slot; takers find the workspaces with events through
 * a global "dirty" ZSET, hinted by a write into an empty outbox and by an ack that leaves events
 * behind, and — because a hint is sent after the write and may be lost (the process dies in
 * between, a taker pops it while another holds the workspace) — through a periodic sweep of the
 * registry of every workspace that ever recorded an event. A relay lock per workspace (taken in
 * the take script, `SET NX PX lease`) keeps a batch with one taker until it acknowledges it or the
 * lease runs out.
 */
import { randomUUID } from 'node:crypto';
import type { DomainEvent, EventOutbox, OutboxBatch } from '@parley/core';
import { Cluster } from 'ioredis';
import { RedisRunner, type RedisClient } from '../connection.js';
import { outboxKeys, workspaceKeys } from '../keys.js';
import { strings } from '../script.js';
import type { EventLog } from './event-log.js';
import { OUTBOX_ACK, OUTBOX_PENDING, OUTBOX_TAKE } from './event-log.lua.js';

/** The longest time between two sweeps of the registry, in ms. */
export const MAX_SWEEP_INTERVAL_MS = 10_000;

/** Registry members checked per SSCAN step (concurrently) during a sweep. */
const SWEEP_STEP = 100;

/**
 * A copy of `client` for blocking commands (BZPOPMIN), which would hold up every other command on
 * a shared connection; without `commandTimeout`, which would cut a long wait short (the caller's
 * deadline bounds it instead).
 */
function blockingCopy(client: RedisClient): RedisClient {
  const copy =
    client instanceof Cluster
      ? client.duplicate([], { redisOptions: { ...client.options.redisOptions, commandTimeout: undefined } })
      : client.duplicate({ commandTimeout: undefined });
  copy.on('error', () => {});
  return copy;
}

/**
 * {@link EventOutbox} on Redis. `take` pops a hinted workspace (ZPOPMIN, else BZPOPMIN on its own
 * connection, created on first use and closed by {@link close}) and takes up to `max` events of it
 * with one script; every `min(outboxLeaseMs, 10 s)` a taker first sweeps the registry, hinting
 * each workspace with events and no holder — which also recovers a batch whose taker died once
 * its lease ran out. `ack` is one script.
 */
export class RedisEventOutbox implements EventOutbox {
  private blocking: RedisRunner | null = null;
  /** Blocking waits run one at a time on the blocking connection. */
  private blockingTail: Promise<unknown> = Promise.resolve();
  private lastSweep = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly log: EventLog) {}

  private get runner() {
    return this.log.runner;
  }

  private get sweepEveryMs() {
    return Math.min(MAX_SWEEP_INTERVAL_MS, this.log.options.leaseMs);
  }

  async take(max: number, waitMs: number): Promise<OutboxBatch | null> {
    const deadline = performance.now() + Math.max(0, waitMs);
    for (;;) {
      if (performance.now() - this.lastSweep >= this.sweepEveryMs) await this.sweep();
      const workspaceId = await this.popHint(deadline);
      if (workspaceId === undefined) return null;
      if (workspaceId === null) continue;
      const batch = await this.takeFrom(workspaceId, max);
      if (batch) return batch;
    }
  }

  async ack(batch: OutboxBatch): Promise<void> {
    const keys = workspaceKeys(this.runner.prefix, batch.workspaceId);
    const left = await this.runner.script(OUTBOX_ACK, {
      keys: { outbox: keys.outbox, outboxLock: keys.outboxLock },
      args: { receipt: batch.receipt, ids: batch.events.map((event) => event.id) },
    });
    if (Number(left) > 0) void this.log.hint(batch.workspaceId);
  }

  /**
   * Closes the blocking connection, if one was opened. A `take` waiting on it resolves `null`, and
   * so does every later `take` once no hint is waiting. Disconnects rather than QUIT, which the
   * server would only read after the blocked command's timeout.
   */
  async close(): Promise<void> {
    this.closed = true;
    const blocking = this.blocking;
    this.blocking = null;
    blocking?.client.disconnect();
  }

  /**
   * A hinted workspace: at once if one is waiting, else the first hinted before `deadline` (or
   * the next sweep, whichever comes first). `null`: none yet but time is left; `undefined`: time is up.
   */
  private async popHint(deadline: number): Promise<string | null | undefined> {
    const { dirty } = outboxKeys(this.runner.prefix);
    const popped = await this.runner.run((client) => client.zpopmin(dirty));
    if (popped.length > 0) return popped[0]!;
    const wait = Math.min(deadline - performance.now(), this.lastSweep + this.sweepEveryMs - performance.now());
    if (deadline - performance.now() <= 0) return undefined;
    // BZPOPMIN's timeout is in seconds (0 would block forever); below 10 ms, just look again.
    if (wait < 10) return null;
    if (this.closed) return undefined;
    const blocking = this.blockingRunner();
    const run = this.blockingTail.then(async () => {
      // Measured again: another take may have held the connection meanwhile.
      const left = Math.min(wait, deadline - performance.now());
      if (left < 10) return null;
      return blocking.run((client) => client.bzpopmin(dirty, (left / 1000).toFixed(3)), left + this.runner.timeoutMs);
    });
    this.blockingTail = run.catch(() => {});
    try {
      const reply = await run;
      return reply ? reply[1] : null;
    } catch (error) {
      if (this.closed) return undefined;
      throw error;
    }
  }

  private blockingRunner(): RedisRunner {
    this.blocking ??= new RedisRunner(blockingCopy(this.runner.client), this.runner.timeoutMs, this.runner.prefix);
    return this.blocking;
  }

  /** Takes a batch of `workspaceId`'s outbox, or `null` when it is empty or held by another taker. */
  private async takeFrom(workspaceId: string, max: number): Promise<OutboxBatch | null> {
    const keys = workspaceKeys(this.runner.prefix, workspaceId);
    const receipt = randomUUID();
    for (;;) {
      const [outcome, ...rows] = strings(
        await this.runner.script(OUTBOX_TAKE, {
          keys: { outbox: keys.outbox, outboxLock: keys.outboxLock, event: keys.event },
          args: { receipt, max, leaseMs: this.log.options.leaseMs, retainedFrom: this.log.retainedFrom() },
        }),
      );
      if (outcome === 'more') continue;
      if (outcome !== 'batch') return null;
      const events: DomainEvent[] = [];
      for (let i = 1; i < rows.length; i += 2) events.push(JSON.parse(rows[i]!) as DomainEvent);
      return { workspaceId, events, receipt };
    }
  }

  /** Hints every registered workspace whose outbox has events and no holder; one sweep at a time. */
  private sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const { workspaces } = outboxKeys(this.runner.prefix);
    let cursor = '0';
    do {
      const [next, members] = await this.runner.run((client) => client.sscan(workspaces, cursor, 'COUNT', SWEEP_STEP));
      cursor = next;
      await Promise.all(
        members.map(async (workspaceId) => {
          const keys = workspaceKeys(this.runner.prefix, workspaceId);
          const pending = await this.runner.script(OUTBOX_PENDING, { keys: { outbox: keys.outbox, outboxLock: keys.outboxLock }, args: {} });
          if (pending === 1) await this.log.hint(workspaceId);
        }),
      );
    } while (cursor !== '0');
    this.lastSweep = performance.now();
  }
}
