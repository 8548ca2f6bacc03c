/**
 * @module Connecting to Redis (standalone or Cluster) and running commands that never hang.
 *
 * Fault policy, and why: a request handler must learn within about a second that Redis is gone,
 * so it can answer 503 instead of holding a connection open. Every call therefore runs under a
 * deadline (`timeoutMs`, default 1 000 ms) enforced here, whatever options the client has; and
 * a call is only sent once the client is `ready`, so nothing sits in ioredis's offline queue to
 * be replayed minutes later, after the caller was already told it failed. Clients this package
 * creates also get {@link resilientRedisOptions}. ioredis reconnects on its own, so the adapters
 * recover as soon as Redis answers again — no restart, no new adapter.
 */
import { ErrorCode, ParleyError, type WorkspaceScope } from '@parley/core';
import { STALL_ALLOWANCE_MS, atTurnEnd, callDeadline, emissionIntervalMs } from '@parley/core/adapter';
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { toAdapterError } from './faults.js';
import type { RedisClient } from './redis-client.js';
import { DEFAULT_PREFIX, checkPrefix, workspaceKeys } from './keys.js';
import {
  FIELD_GET,
  firstKey,
  runScript,
  type Gate,
  type LuaScript,
  type ScriptCall,
  type ScriptReply,
} from './script.js';

/** How long a measured offset between this process's clock and the server's is trusted, in ms. */
const CLOCK_OFFSET_TTL_MS = 60_000;
/** The most `TIME` samples one measurement of that offset takes, stopping at a quick one. */
const CLOCK_SAMPLES = 3;
/** A round trip short enough (ms) that its sample's error, half of it, does not matter. */
const QUICK_ROUND_TRIP_MS = 20;

/** Per client: the server's clock minus ours (ms), and when that was measured (our clock). */
const clockOffsets = new WeakMap<RedisClient, { offsetMs: number; measuredAt: number; refreshing?: boolean }>();
/** Per client: the first measurement of that offset while it is under way. */
const firstMeasurements = new WeakMap<RedisClient, Promise<number>>();

export type { RedisClient };

/** Where the adapters find Redis: an existing client, a URL, or Cluster seed nodes. */
export type RedisTarget =
  | { client: RedisClient }
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`; `options` are merged over ours. */
  | { url: string; options?: RedisOptions }
  /** Seed nodes of a Redis Cluster; `options` are merged over ours. */
  | { clusterNodes: ClusterNode[]; options?: ClusterOptions };

/** Options every Redis adapter of this package accepts. */
export type RedisAdapterOptions = RedisTarget & {
  /** Prepended to every key; default `parley:`. May not contain `{` or `}`. */
  prefix?: string;
  /**
   * Deadline of each round trip to Redis — so of almost every port call (see the README for the
   * few with more) — in ms, waiting for the connection included; default 1 000.
   */
  timeoutMs?: number;
};

/** The default deadline of one round trip, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 1_000;

/**
 * The ioredis options this package uses for clients it creates (also a good start for clients
 * you pass in): `enableOfflineQueue: false` (fail at once while disconnected instead of queueing),
 * `autoResendUnfulfilledCommands: false` (a command the caller already saw fail is not replayed
 * after reconnecting), `commandTimeout` (a half-open connection cannot stall a call forever),
 * `connectTimeout`, and a retry strategy that keeps reconnecting every ≤ 500 ms forever.
 */
export function resilientRedisOptions(timeoutMs = DEFAULT_TIMEOUT_MS): RedisOptions {
  return {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    // A backstop behind each call's own deadline (`run`), which also allows for stalls of this process.
    commandTimeout: timeoutMs + STALL_ALLOWANCE_MS,
    connectTimeout: Math.max(timeoutMs, 2_000),
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
  };
}

/** What {@link connect} resolved from {@link RedisAdapterOptions}. */
export interface Connection {
  client: RedisClient;
  /** Whether the client was created here, so its owner must close it. */
  owned: boolean;
  prefix: string;
  timeoutMs: number;
}

/**
 * A client for `options` (created from `url` or `clusterNodes`, or the one passed in), with the
 * checked prefix and deadline. The prefix is checked first, so a refused one opens no connection.
 * @throws TypeError for a prefix containing `{` or `}`.
 */
export function connect(options: RedisAdapterOptions): Connection {
  const prefix = checkPrefix(options.prefix ?? DEFAULT_PREFIX);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if ('client' in options) return { client: options.client, owned: false, prefix, timeoutMs };
  let client: RedisClient;
  if ('url' in options) {
    client = new Redis(options.url, { ...resilientRedisOptions(timeoutMs), ...options.options });
  } else {
    const { retryStrategy, enableOfflineQueue: _queue, ...nodeOptions } = resilientRedisOptions(timeoutMs);
    client = new Cluster(options.clusterNodes, {
      enableOfflineQueue: false,
      clusterRetryStrategy: retryStrategy as (attempt: number) => number,
      ...options.options,
      redisOptions: { ...nodeOptions, ...options.options?.redisOptions },
    });
  }
  // Faults surface as rejected calls; without a listener ioredis would print every reconnect.
  client.on('error', () => {});
  return { client, owned: true, prefix, timeoutMs };
}

/**
 * Closes a client this package created; leaves a caller's client alone. `quit` lets pending
 * replies arrive; while disconnected it could wait for a reconnect, so it falls back to
 * `disconnect`.
 */
export async function closeClient(client: RedisClient, owned: boolean): Promise<void> {
  if (!owned || client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

/**
 * Sockets whose writes are held until the event loop's check phase (see {@link batchWrites}), each
 * with the callbacks to run before its writes leave ({@link RedisRunner.atTurnEnd}).
 */
const corked = new WeakMap<object, Array<() => void>>();

/**
 * Holds the writes to `client`'s socket until this turn of the event loop has run its callbacks,
 * then sends them in one `writev`: under load, the commands of every request handled in the turn
 * reach Redis together, and Redis reads and answers them in one go instead of one system call
 * each — about a quarter of Redis's CPU per message (docs/performance.md). The order of commands is
 * unchanged, and a lone command leaves at the end of its turn. (ioredis's `enableAutoPipelining`
 * batches the same way, but its pipelines can crash the process with an uncaught TypeError when
 * a connection fails mid-batch, redis/ioredis#1931.) A Cluster client has a socket per node and is
 * left as it is. `atEnd` runs at the turn's end, before the writes leave, so what it sends leaves
 * with them. Returns false, doing nothing, for a client without a socket of its own.
 */
function batchWrites(client: RedisClient, atEnd?: () => void): boolean {
  const stream = (client as { stream?: { cork(): void; uncork(): void } }).stream;
  if (stream === undefined) return false;
  let callbacks = corked.get(stream);
  if (callbacks === undefined) {
    const beforeUncork: Array<() => void> = (callbacks = []);
    stream.cork();
    corked.set(stream, beforeUncork);
    atTurnEnd(() => {
      try {
        // Also the callbacks added while these run.
        for (const callback of beforeUncork) callback();
      } finally {
        corked.delete(stream);
        stream.uncork();
      }
    });
  }
  if (atEnd) callbacks.push(atEnd);
  return true;
}

/**
 * Runs commands against one client under a deadline, mapping faults to `service_unavailable`;
 * carries the key prefix (already checked by {@link connect}) for the stores.
 */
export class RedisRunner {
  /** Calls waiting for the client to become ready; a call leaves when its deadline passes. */
  private readonly waiting = new Set<() => void>();
  private listening = false;

  constructor(
    readonly client: RedisClient,
    readonly timeoutMs: number,
    readonly prefix: string,
  ) {}

  /**
   * Resolves with `op(client)` once the client is ready. Rejects with ParleyError
   * `service_unavailable` when Redis cannot be reached or `op` does not finish within
   * `timeoutMs` (or the `deadlineMs` given, for blocking commands); other errors (bugs, script
   * errors) pass through unchanged.
   */
  async run<T>(op: (client: RedisClient) => Promise<T>, deadlineMs = this.timeoutMs): Promise<T> {
    const { client } = this;
    let cancel: (() => void) | undefined;
    try {
      return await new Promise<T>((resolve, reject) => {
        if (client.status === 'end') throw new Error('The Redis client was closed.');
        const send = () => {
          try {
            op(client).then(resolve, reject);
          } catch (error) {
            reject(error);
          }
        };
        cancel = callDeadline(deadlineMs, () => {
          // Leaving the queue means a caller already told "unavailable" is not sent once Redis is
          // back, and that expired calls hold nothing however long an outage lasts.
          this.waiting.delete(send);
          reject(new Error(`Redis did not answer within ${deadlineMs} ms`));
        });
        if (client.status === 'ready') {
          batchWrites(client);
          send();
        } else this.sendWhenReady(send);
      });
    } catch (error) {
      throw toAdapterError(error);
    } finally {
      cancel?.();
    }
  }

  /**
   * Runs `fn` at the end of this turn of the event loop (its check phase), before the commands
   * written in the turn leave, so the commands `fn` sends leave with them; on a Cluster client, or
   * before the client is ready, in core's end-of-turn queue alone. For calls gathered over a turn and sent as
   * one (`TurnBatcher`).
   */
  atTurnEnd(fn: () => void): void {
    if (this.client.status === 'ready' && batchWrites(this.client, fn)) return;
    atTurnEnd(fn);
  }

  /**
   * Runs a Lua script with its named keys and args (one round trip) under {@link run}'s deadline
   * and fault mapping. Run for a `scope` whose rate-limit decision is pending, the script decides
   * it first (see {@link gateFor}, script.ts): refused, it does nothing and this throws ParleyError
   * `rate_limit_exceeded`.
   */
  async script<K extends string, A extends string>(
    script: LuaScript<K, A>,
    call: ScriptCall<K, A>,
    scope?: WorkspaceScope,
  ): Promise<ScriptReply> {
    // Known and fresh almost always: then no await, so the script goes out in this tick.
    const offsetMs = this.freshClockOffset() ?? (await this.clockOffset());
    const send = (gate?: Gate) => {
      // The script's fence (see script.ts): it must not run once this call has given up. Taken as
      // the round trip starts, where `run`'s deadline starts, with a margin before it that leaves
      // room for the reply to travel back, so a script that ran is a script whose answer the
      // caller sees.
      const giveUpAt = Date.now() + this.timeoutMs - Math.min(100, this.timeoutMs / 4);
      return this.run((client) => runScript(client, script, call, giveUpAt + offsetMs, gate));
    };
    const gate = this.gateFor(scope, firstKey(script, call));
    if (gate === undefined) {
      // Not in the workspace's slot: decided apart first, so the script still cannot run before it.
      if (scope?.admission !== undefined && !scope.admission.admitted) await scope.admission.admit();
      return send();
    }
    let reply: ScriptReply;
    try {
      reply = await send(gate);
    } catch (error) {
      this.failed(scope!);
      throw error;
    }
    return this.settle(scope!, gate, reply);
  }

  /** `HGET hash field` — as a script when it decides `scope`'s pending rate limit (one round trip either way). */
  async hget(hash: string, field: string, scope?: WorkspaceScope): Promise<string | null> {
    if (scope?.admission?.pending)
      return (await this.script(FIELD_GET, { keys: { hash }, args: { field } }, scope)) as string | null;
    return this.run((client) => client.hget(hash, field));
  }

  /**
   * The {@link Gate} of a script run for `scope` whose first key is `key`: it takes the scope's
   * pending rate-limit decision (the core hands one only to the calls `RedisStorage` declares, when
   * its rate-limit store is this bundle's, on this client and prefix) when `key` is in the
   * workspace's slot, where the rate-limit state is (keys.ts). Otherwise `undefined`, leaving it.
   * The caller sends the script with the gate, then reports its reply with {@link settle} — or,
   * when the call failed, with {@link failed}.
   */
  gateFor(scope: WorkspaceScope | undefined, key: string | undefined): Gate | undefined {
    const admission = scope?.admission;
    if (admission === undefined || !admission.pending || key === undefined) return undefined;
    const keys = workspaceKeys(this.prefix, scope!.workspaceId);
    if (!key.startsWith(keys.tag)) return undefined;
    const hit = admission.take()!;
    return {
      key: keys.rateLimit,
      nowMs: hit.nowMs,
      intervalMs: emissionIntervalMs(hit.rule),
      limit: hit.rule.limit,
      failOpen: admission.failOpen,
    };
  }

  /** The gated call of `scope` failed before its reply: the failure policy decides its rate limit. */
  failed(scope: WorkspaceScope): void {
    scope.admission!.fail();
  }

  /**
   * Reports a gated reply (`{allowed, remaining, resetMs, retryAfterMs, body}`, script.ts) to the
   * rate-limit decision of `scope`, whose hit `gate` carries, and returns the body.
   * @throws ParleyError `rate_limit_exceeded` when the hit was refused (the script did nothing),
   * `service_unavailable` when the rate-limit state could not be written and the policy is closed
   */
  settle(scope: WorkspaceScope, gate: Gate, reply: ScriptReply): ScriptReply {
    const admission = scope.admission!;
    const [allowed, remaining, resetMs, retryAfterMs, body] = reply as [
      number,
      number,
      number,
      number,
      ScriptReply | Error | undefined,
    ];
    if (allowed === -1) {
      // The rate-limit state could not be written: the failure policy decided (see script.ts).
      admission.fail(new Error('Redis refused to read or write the rate-limit state'));
      if (!gate.failOpen)
        throw new ParleyError(ErrorCode.serviceUnavailable, 'Rate limits cannot be checked right now; retry shortly.');
    } else admission.decide({ allowed: allowed === 1, limit: gate.limit, remaining, resetMs, retryAfterMs });
    if (body instanceof Error) throw body;
    return body ?? null;
  }

  /** The measured clock offset while it is trusted, else `undefined` (see {@link clockOffset}). */
  private freshClockOffset(): number | undefined {
    const known = clockOffsets.get(this.client);
    return known && Date.now() - known.measuredAt < CLOCK_OFFSET_TTL_MS ? known.offsetMs : undefined;
  }

  /**
   * The server's clock minus ours in ms, measured with `TIME` (half the round trip corrected)
   * on first use and refreshed in the background once a minute. A Cluster is measured on
   * whichever node answers: its nodes' clocks are assumed synchronised (NTP), as Redis's own
   * expiry across failovers assumes.
   */
  private async clockOffset(): Promise<number> {
    const known = clockOffsets.get(this.client);
    if (known && Date.now() - known.measuredAt < CLOCK_OFFSET_TTL_MS) return known.offsetMs;
    if (known) {
      if (!known.refreshing) {
        known.refreshing = true;
        this.measureClockOffset().catch(() => (known.refreshing = false));
      }
      return known.offsetMs;
    }
    // The calls of a first burst share one measurement.
    let first = firstMeasurements.get(this.client);
    if (first === undefined) {
      first = this.measureClockOffset().finally(() => firstMeasurements.delete(this.client));
      firstMeasurements.set(this.client, first);
    }
    return first;
  }

  /**
   * The offset is the server's time minus the middle of the round trip, so it is off by up to half
   * the round trip: a sample taken across a stall of this process (a busy start, a long GC) would
   * move every deadline by half the stall. As NTP does, the sample with the shortest round trip
   * is kept, out of up to {@link CLOCK_SAMPLES} taken until one is quick.
   */
  private async measureClockOffset(): Promise<number> {
    let best: { offsetMs: number; roundTripMs: number; measuredAt: number } | undefined;
    for (let sample = 0; sample < CLOCK_SAMPLES && !(best && best.roundTripMs <= QUICK_ROUND_TRIP_MS); sample++) {
      const sentAt = Date.now();
      const [seconds, micros] = await this.run((client) => client.time());
      const receivedAt = Date.now();
      const offsetMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - (sentAt + receivedAt) / 2;
      if (!best || receivedAt - sentAt < best.roundTripMs)
        best = { offsetMs, roundTripMs: receivedAt - sentAt, measuredAt: receivedAt };
    }
    clockOffsets.set(this.client, { offsetMs: best!.offsetMs, measuredAt: best!.measuredAt });
    return best!.offsetMs;
  }

  /** Queues `send` for the next `ready`, with one listener for all waiting calls however many. */
  private sendWhenReady(send: () => void): void {
    this.waiting.add(send);
    if (this.listening) return;
    this.listening = true;
    this.client.once('ready', () => {
      this.listening = false;
      const calls = [...this.waiting];
      this.waiting.clear();
      for (const call of calls) call();
    });
    if (this.client.status === 'wait') this.client.connect().catch(() => {});
  }
}

/**
 * What every adapter class of this package shares: the client (created from `options` or
 * passed in), a {@link RedisRunner} with the call deadline and key prefix, and `close()`.
 */
export abstract class RedisAdapter {
  /** The ioredis client in use. */
  readonly client: RedisClient;
  protected readonly runner: RedisRunner;
  private readonly owned: boolean;

  /** @throws TypeError for a prefix containing `{` or `}` (before any connection is opened). */
  constructor(options: RedisAdapterOptions) {
    const { client, owned, prefix, timeoutMs } = connect(options);
    this.client = client;
    this.owned = owned;
    this.runner = new RedisRunner(client, timeoutMs, prefix);
  }

  /** The key prefix (checked). */
  get prefix(): string {
    return this.runner.prefix;
  }

  /** Closes the client if this adapter created it; a client passed in stays open. */
  close(): Promise<void> {
    return closeClient(this.client, this.owned);
  }
}
