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
import type { DomainEvent } from '@parley/core';
import type { EventOutbox, OutboxBatch } from '@parley/core/adapter';
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

/** `storage.outbox` on Redis, with `close` for the blocking connection its `take` may open. */
export type RedisEventOutbox = EventOutbox & {
  /**
   * Closes the blocking connection, if one was opened. A `take` waiting on it resolves `null`, and
   * so does every later `take` once no hint is waiting. Disconnects rather than QUIT, which the
   * server would only read after the blocked command's timeout.
   */
  close(): Promise<void>;
};

/**
 * {@link EventOutbox} on Redis. `take` pops a hinted workspace (ZPOPMIN, else BZPOPMIN on its own
 * connection, created on first use and closed by `close`) and takes up to `max` events of it
 * with one script; every `min(outboxLeaseMs, 10 s)` a taker first sweeps the registry, hinting
 * each workspace with events and no holder — which also recovers a batch whose taker died once
 * its lease ran out. `ack` is one script.
 */
export function outboxStore(log: EventLog): RedisEventOutbox {
  const runner = log.runner;
  const sweepEveryMs = Math.min(MAX_SWEEP_INTERVAL_MS, log.options.leaseMs);
  let blocking: RedisRunner | null = null;
  /** Blocking waits run one at a time on the blocking connection. */
  let blockingTail: Promise<unknown> = Promise.resolve();
  let lastSweep = Number.NEGATIVE_INFINITY;
  let sweeping: Promise<void> | null = null;
  let closed = false;

  /**
   * A hinted workspace: at once if one is waiting, else the first hinted before `deadline` (or
   * the next sweep, whichever comes first). `null`: none yet but time is left; `undefined`: time is up.
   */
  async function popHint(deadline: number): Promise<string | null | undefined> {
    const { dirty } = outboxKeys(runner.prefix);
    const popped = await runner.run((client) => client.zpopmin(dirty));
    if (popped.length > 0) return popped[0]!;
    const wait = Math.min(deadline - performance.now(), lastSweep + sweepEveryMs - performance.now());
    if (deadline - performance.now() <= 0) return undefined;
    // BZPOPMIN's timeout is in seconds (0 would block forever); below 10 ms, just look again.
    if (wait < 10) return null;
    if (closed) return undefined;
    blocking ??= new RedisRunner(blockingCopy(runner.client), runner.timeoutMs, runner.prefix);
    const waiter = blocking;
    const run = blockingTail.then(async () => {
      // Measured again: another take may have held the connection meanwhile.
      const left = Math.min(wait, deadline - performance.now());
      if (left < 10) return null;
      return waiter.run((client) => client.bzpopmin(dirty, (left / 1000).toFixed(3)), left + runner.timeoutMs);
    });
    blockingTail = run.catch(() => {});
    try {
      const reply = await run;
      return reply ? reply[1] : null;
    } catch (error) {
      if (closed) return undefined;
      throw error;
    }
  }

  /** Takes a batch of `workspaceId`'s outbox, or `null` when it is empty or held by another taker. */
  async function takeFrom(workspaceId: string, max: number): Promise<OutboxBatch | null> {
    const keys = workspaceKeys(runner.prefix, workspaceId);
    const receipt = randomUUID();
    for (;;) {
      const [outcome, ...rows] = strings(
        await runner.script(OUTBOX_TAKE, {
          keys: { outbox: keys.outbox, outboxLock: keys.outboxLock, event: keys.event },
          args: { receipt, max, leaseMs: log.options.leaseMs, retainedFrom: log.retainedFrom() },
        }),
      );
      if (outcome === 'more') continue;
      if (outcome !== 'batch') return null;
      const events: DomainEvent[] = [];
      let traceContexts: Record<string, string> | undefined;
      for (let i = 1; i < rows.length; i += 2) {
        const event = JSON.parse(rows[i]!) as DomainEvent;
        events.push(event);
        // An entry is the event's id, then a space and its trace context when it has one.
        const entry = rows[i - 1]!;
        const space = entry.indexOf(' ');
        if (space >= 0) (traceContexts ??= {})[event.id] = entry.slice(space + 1);
      }
      return traceContexts ? { workspaceId, events, receipt, traceContexts } : { workspaceId, events, receipt };
    }
  }

  /** Hints every registered workspace whose outbox has events and no holder; one sweep at a time. */
  function sweep(): Promise<void> {
    sweeping ??= sweepOnce().finally(() => {
      sweeping = null;
    });
    return sweeping;
  }

  async function sweepOnce(): Promise<void> {
    const { workspaces } = outboxKeys(runner.prefix);
    let cursor = '0';
    do {
      const [next, members] = await runner.run((client) => client.sscan(workspaces, cursor, 'COUNT', SWEEP_STEP));
      cursor = next;
      await Promise.all(
        members.map(async (workspaceId) => {
          const keys = workspaceKeys(runner.prefix, workspaceId);
          const pending = await runner.script(OUTBOX_PENDING, {
            keys: { outbox: keys.outbox, outboxLock: keys.outboxLock },
            args: {},
          });
          if (pending === 1) await log.hint(workspaceId);
        }),
      );
    } while (cursor !== '0');
    lastSweep = performance.now();
  }

  return {
    async take(max, waitMs) {
      const deadline = performance.now() + Math.max(0, waitMs);
      for (;;) {
        if (performance.now() - lastSweep >= sweepEveryMs) await sweep();
        const workspaceId = await popHint(deadline);
        if (workspaceId === undefined) return null;
        if (workspaceId === null) continue;
        const batch = await takeFrom(workspaceId, max);
        if (batch) return batch;
      }
    },

    async ack(batch) {
      const keys = workspaceKeys(runner.prefix, batch.workspaceId);
      const left = await runner.script(OUTBOX_ACK, {
        keys: { outbox: keys.outbox, outboxLock: keys.outboxLock },
        args: { receipt: batch.receipt, ids: batch.events.map((event) => event.id) },
      });
      if (Number(left) > 0) void log.hint(batch.workspaceId);
    },

    async close() {
      closed = true;
      const connection = blocking;
      blocking = null;
      connection?.client.disconnect();
    },
  };
}
