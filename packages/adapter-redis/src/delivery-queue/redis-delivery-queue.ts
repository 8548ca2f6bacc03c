/** @module The delivery queue on Redis: two Streams with consumer groups, XAUTOCLAIM leases, a ZSET of scheduled retries. */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  checkWaitMs,
  DEFAULT_DELIVERY_LEASE_MS,
  positiveInteger,
  type DeliveryJob,
  type DeliveryLane,
  type DeliveryQueue,
  type DeliveryQueueStats,
  type LeasedJob,
} from '@parley/core/adapter';
import { Cluster } from 'ioredis';
import { RedisAdapter, RedisRunner, type RedisAdapterOptions, type RedisClient } from '../connection.js';
import { deliveryQueueKeys, type DeliveryQueueKeys } from '../keys.js';
import { strings } from '../script.js';
import { TurnBatcher } from '../turn-batcher.js';
import {
  QUEUE_ACK,
  QUEUE_ENQUEUE,
  QUEUE_FORGET_CONSUMERS,
  QUEUE_LEASE,
  QUEUE_PROMOTE,
  QUEUE_RETRY,
  QUEUE_STATS,
} from './redis-delivery-queue.lua.js';

/** Options of {@link RedisDeliveryQueue}: the connection options of every adapter of this package, and: */
export type RedisDeliveryQueueOptions = RedisAdapterOptions & {
  /** How long a leased job is held for its worker before another may take it over, in ms; default 30 000. */
  leaseMs?: number;
  /** How often an instance leasing retries promotes due ones, in ms; default 250 (at most 500, so a retry is leasable within 1 s of its due time). */
  promoteEveryMs?: number;
};

const GROUP = 'workers';
/** Due retries moved per script run: bounded work per script, so other clients never wait long. */
const PROMOTE_BATCH = 500;
/** Jobs per enqueue script. */
const ENQUEUE_BATCH = 500;
/** Consumers without leases that have been idle this long belonged to instances that died. */
const DEAD_CONSUMER_IDLE_MS = 24 * 3_600_000;
const RECEIPT = /^(first|retry)\/(\d+-\d+)$/;

type StreamReply = Array<[string, Array<[string, string[]]>]> | null;

/**
 * {@link DeliveryQueue} on Redis (6.2+, standalone or Cluster), shared by any number of worker
 * processes and durable as the server's data is (see *Durability* in the README).
 *
 * Layout (`P` the prefix): streams `P{parley:deliveries}:first` and `P{parley:deliveries}:retry`, each with
 * consumer group `workers` (created with MKSTREAM on first use), and ZSET `P{parley:deliveries}:scheduled`
 * of retries not yet due (member = job JSON, score = due time in ms). Each instance is one consumer.
 * - `enqueue`: XADD to `first` (one script per 500 jobs).
 * - `lease`: one script takes entries whose lease ran out (XAUTOCLAIM, idle > `leaseMs`, from a
 *   cursor the instance keeps so the whole pending list is visited; once a scan reaches the end,
 *   the next starts a block slice later), then new entries (XREADGROUP `>`); for the retry lane
 *   it first promotes due retries. With none and time left to wait, an XREADGROUP BLOCK on a
 *   dedicated duplicated connection (never the shared client: a blocked command would stall every
 *   other call on it) waits in slices of at most 2 s, so claims of expired leases run again while
 *   waiting.
 * - `ack`: XACK + XDEL in one script, for all the acks asked for in a turn; `retry`: XACK + XDEL
 *   of the old entry and ZADD of the next job in one script, which schedules only if the old
 *   entry was still there.
 * - Due retries move to the `retry` stream (in due order) in `lease('retry')` and on a timer
 *   (`promoteEveryMs`) that an instance starts on its first `lease('retry')`.
 * Receipts are `<lane>/<stream entry id>`. Times compared with `dueAt` are this process's clock,
 * so instances need synchronized clocks (NTP).
 *
 * Redis Cluster: every key carries the hash tag `{parley:deliveries}`, so the whole queue lives in one
 * slot, on one shard. That is what lets one script move a job between streams and the ZSET
 * atomically; the queue holds in-flight work only (a job leaves at its ack), and one shard serves
 * tens of thousands of stream operations per second, well above what the delivery workers make.
 *
 * Each call runs under `timeoutMs`; `lease` takes up to `waitMs` plus one round trip's deadline.
 * Faults reject with ParleyError `service_unavailable`, as for the other adapters.
 */
export class RedisDeliveryQueue extends RedisAdapter implements DeliveryQueue {
  readonly leaseMs: number;
  /** This instance's consumer name in both groups. */
  readonly consumer = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly keys: DeliveryQueueKeys;
  private readonly promoteEveryMs: number;
  /** Longest XREADGROUP BLOCK: a quarter lease (≥ 50 ms, ≤ 2 s), so expired leases are claimed again soon while waiting. */
  private readonly blockSliceMs: number;
  /** Acks asked for in this turn, grouped by lane (see {@link ack}). */
  private readonly acks = new TurnBatcher<{ lane: DeliveryLane; id: string }>(this.runner, (acks) =>
    this.runner
      .script(QUEUE_ACK, {
        keys: { stream: this.keys[acks[0]!.lane] },
        args: { group: GROUP, ids: acks.map((ack) => ack.id) },
      })
      .then(() => undefined),
  );
  /** Where each lane's scan for expired leases goes on (`0-0`: the last scan reached the end). */
  private readonly cursors: Record<DeliveryLane, string> = { first: '0-0', retry: '0-0' };
  /** When each lane's last scan for expired leases that reached the end began (ms). */
  private readonly scannedAt: Record<DeliveryLane, number> = { first: -Infinity, retry: -Infinity };
  /** Duplicated connections for blocking reads: idle ones, and every one opened (to close them). */
  private readonly idleBlockers: RedisRunner[] = [];
  private readonly blockers = new Set<RedisClient>();
  private promoteTimer: NodeJS.Timeout | undefined;
  private promoting = false;
  private swept = false;
  private closed = false;

  /** @throws TypeError for a prefix containing `{` or `}`; RangeError for a `leaseMs` or `promoteEveryMs` out of range. */
  constructor(options: RedisDeliveryQueueOptions) {
    const leaseMs = positiveInteger(options.leaseMs, DEFAULT_DELIVERY_LEASE_MS, 'leaseMs');
    const promoteEveryMs = options.promoteEveryMs ?? 250;
    if (!Number.isSafeInteger(promoteEveryMs) || promoteEveryMs < 1 || promoteEveryMs > 500) {
      throw new RangeError(`promoteEveryMs must be an integer from 1 to 500, got ${promoteEveryMs}`);
    }
    super(options);
    this.leaseMs = leaseMs;
    this.promoteEveryMs = promoteEveryMs;
    this.blockSliceMs = Math.min(2_000, Math.max(50, Math.floor(leaseMs / 4)));
    this.keys = deliveryQueueKeys(this.runner.prefix);
  }

  async enqueue(jobs: readonly DeliveryJob[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += ENQUEUE_BATCH) {
      const batch = jobs.slice(i, i + ENQUEUE_BATCH).map((job) => JSON.stringify(job));
      await this.runner.script(QUEUE_ENQUEUE, {
        keys: { stream: this.keys.first },
        args: { group: GROUP, jobs: batch },
      });
    }
  }

  async lease(lane: DeliveryLane, max: number, waitMs: number): Promise<LeasedJob[]> {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be an integer ≥ 1, got ${max}`);
    checkWaitMs(waitMs);
    if (lane === 'retry') this.startPromoting();
    if (!this.swept) {
      this.swept = true;
      // Never this instance's own consumer: the sweep may run after this lease and its ack.
      void this.forgetConsumers(DEAD_CONSUMER_IDLE_MS, { self: false }).catch(() => {});
    }
    const deadline = Date.now() + waitMs;
    try {
      for (;;) {
        const leased = await this.leaseNow(lane, max);
        const left = deadline - Date.now();
        if (leased.length > 0 || left <= 0 || this.closed) return leased;
        const woken = await this.block(lane, max, Math.max(1, Math.ceil(Math.min(left, this.blockSliceMs))));
        if (woken.length > 0 || this.closed) return woken;
      }
    } catch (error) {
      // close() cuts the blocking connections: a wait it ends ends with nothing leased.
      if (this.closed) return [];
      throw error;
    }
  }

  /**
   * Acks `leased`. The acks asked for in one turn of the event loop (a worker's attempts that
   * ended together) are sent as one script per lane at the turn's end, with the turn's other
   * commands (`TurnBatcher`): a busy worker runs one XDEL and one XACK for several jobs.
   */
  async ack(leased: LeasedJob): Promise<void> {
    const [lane, id] = parseReceipt(leased.receipt);
    await this.acks.add(lane, { lane, id });
  }

  async retry(leased: LeasedJob, next: DeliveryJob, dueAt: number): Promise<void> {
    const [lane, id] = parseReceipt(leased.receipt);
    if (!Number.isFinite(dueAt)) throw new RangeError(`dueAt must be ms since the epoch, got ${dueAt}`);
    await this.runner.script(QUEUE_RETRY, {
      keys: { stream: this.keys[lane], scheduled: this.keys.scheduled },
      args: { group: GROUP, id, dueAt: Math.round(dueAt), job: JSON.stringify(next) },
    });
  }

  async stats(): Promise<DeliveryQueueStats> {
    const { first, retry, scheduled } = this.keys;
    const reply = await this.runner.script(QUEUE_STATS, {
      keys: { first, retry, scheduled },
      args: { group: GROUP, now: Date.now() },
    });
    const [firstReady, retryReady, notDue, leased] = (reply as number[]).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    return { first: firstReady, retry: retryReady, scheduled: notDue, leased };
  }

  /** Moves retries due now into the `retry` stream (what the timer runs). Returns how many moved. */
  async promoteDue(): Promise<number> {
    let moved = 0;
    for (let round = 0; round < 20; round += 1) {
      const reply = await this.runner.script(QUEUE_PROMOTE, {
        keys: { scheduled: this.keys.scheduled, retry: this.keys.retry },
        args: { group: GROUP, now: Date.now(), limit: PROMOTE_BATCH },
      });
      moved += Number(reply);
      if (Number(reply) < PROMOTE_BATCH) break;
    }
    return moved;
  }

  /**
   * Stops the promotion timer, ends waiting `lease` calls with `[]`, closes the blocking
   * connections, sends the acks not sent yet, removes this instance's consumer from the groups
   * when it holds no lease (leases it holds are taken over by other instances once they run out),
   * then closes the client if this queue created it.
   */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.promoteTimer);
    for (const blocker of this.blockers) blocker.disconnect();
    this.blockers.clear();
    // Acks not sent yet go out first: the consumer is forgotten only without leases.
    await this.acks.flush();
    await this.forgetConsumers(0, { self: true }).catch(() => {});
    await super.close();
  }

  /**
   * One lease script: expired leases, then new entries (after promoting due retries in the retry
   * lane). The scan for expired leases runs while it has not reached the end of the pending list,
   * then again once `blockSliceMs` have passed, not on every call: a worker busy enough to lease
   * back to back would otherwise run an XAUTOCLAIM per lease to look for leases that run out
   * rarely (a worker died). A job whose lease ran out is taken over at most a slice later, as it
   * already was while a worker waits.
   */
  private async leaseNow(lane: DeliveryLane, max: number): Promise<LeasedJob[]> {
    const now = Date.now();
    const reclaim = this.cursors[lane] !== '0-0' || now - this.scannedAt[lane] >= this.blockSliceMs;
    const reply = strings(
      await this.runner.script(QUEUE_LEASE, {
        keys: { stream: this.keys[lane], scheduled: this.keys.scheduled },
        args: {
          group: GROUP,
          consumer: this.consumer,
          leaseMs: this.leaseMs,
          max,
          cursor: this.cursors[lane],
          reclaim: reclaim ? 1 : 0,
          now,
          promoteLimit: lane === 'retry' ? PROMOTE_BATCH : 0,
        },
      }),
    );
    this.cursors[lane] = reply[0]!;
    if (reclaim && reply[0] === '0-0') this.scannedAt[lane] = now;
    const leased: LeasedJob[] = [];
    for (let i = 1; i < reply.length; i += 2) leased.push(toLeased(lane, reply[i]!, reply[i + 1]!));
    return leased;
  }

  /** XREADGROUP BLOCK for up to `blockMs` on an idle duplicated connection (a new one when none is idle). */
  private async block(lane: DeliveryLane, max: number, blockMs: number): Promise<LeasedJob[]> {
    const blocker = this.idleBlockers.pop() ?? this.openBlocker();
    let reply: StreamReply;
    try {
      reply = await blocker.run(
        (client) =>
          client.xreadgroup(
            'GROUP',
            GROUP,
            this.consumer,
            'COUNT',
            max,
            'BLOCK',
            blockMs,
            'STREAMS',
            this.keys[lane],
            '>',
          ) as Promise<StreamReply>,
      );
    } catch (error) {
      // The connection may still hold the blocked command: never reuse it.
      this.blockers.delete(blocker.client);
      blocker.client.disconnect();
      // The group vanished (keys deleted): the next lease script creates it again.
      if (error instanceof Error && error.message.startsWith('NOGROUP')) return [];
      throw error;
    }
    if (this.closed) blocker.client.disconnect();
    else this.idleBlockers.push(blocker);
    return (reply?.[0]?.[1] ?? []).filter(([, fields]) => fields).map(([id, fields]) => toLeased(lane, id, fields[1]!));
  }

  private openBlocker(): RedisRunner {
    // Its deadline covers the longest block plus one ordinary round trip.
    const timeoutMs = this.blockSliceMs + this.runner.timeoutMs;
    const client =
      this.client instanceof Cluster
        ? this.client.duplicate([], {
            redisOptions: { ...this.client.options.redisOptions, commandTimeout: timeoutMs },
          })
        : this.client.duplicate({ commandTimeout: timeoutMs });
    client.on('error', () => {});
    this.blockers.add(client);
    return new RedisRunner(client, timeoutMs, this.runner.prefix);
  }

  private startPromoting(): void {
    if (this.promoteTimer || this.closed) return;
    this.promoteTimer = setInterval(() => {
      if (this.promoting) return;
      this.promoting = true;
      // A failed run (Redis away) is retried on the next tick; lease('retry') promotes too.
      void this.promoteDue()
        .catch(() => {})
        .finally(() => (this.promoting = false));
    }, this.promoteEveryMs);
    this.promoteTimer.unref();
  }

  /**
   * Deletes the group consumers without pending entries that were idle over `idleMs`, and — with
   * `self` — this instance's own (consumer names are never empty, so '' matches none).
   */
  private forgetConsumers(idleMs: number, { self }: { self: boolean }): Promise<unknown> {
    return this.runner.script(QUEUE_FORGET_CONSUMERS, {
      keys: { first: this.keys.first, retry: this.keys.retry },
      args: { group: GROUP, consumer: self ? this.consumer : '', idleMs },
    });
  }
}

function toLeased(lane: DeliveryLane, id: string, json: string): LeasedJob {
  return { job: JSON.parse(json) as DeliveryJob, receipt: `${lane}/${id}` };
}

/** @throws TypeError for a receipt this queue did not issue. */
function parseReceipt(receipt: string): [DeliveryLane, string] {
  const match = RECEIPT.exec(receipt);
  if (!match) throw new TypeError('Not a receipt of RedisDeliveryQueue.');
  return [match[1] as DeliveryLane, match[2]!];
}
