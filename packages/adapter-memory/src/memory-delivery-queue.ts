/** @module The delivery queue in this process's memory: two lanes, leases, scheduled retries; lost on exit. */
import {
  checkWaitMs,
  DEFAULT_DELIVERY_LEASE_MS,
  frozenCopy,
  positiveInteger,
  type DeliveryJob,
  type DeliveryLane,
  type DeliveryQueue,
  type DeliveryQueueStats,
  type LeasedJob,
} from '@parley/core/adapter';
import { Fifo, MinHeap } from './queue-structures.js';

/** Options of {@link MemoryDeliveryQueue}. */
export interface MemoryDeliveryQueueOptions {
  /** How long a leased job is held for its worker before it is handed out again, in ms; default 30 000. */
  leaseMs?: number;
}

/** A job in the queue, from enqueue (or promotion of its retry) until it is acked or rescheduled. */
interface Entry {
  /** The receipt of every lease of this entry: `<lane>/<sequence>`. */
  receipt: string;
  lane: DeliveryLane;
  job: DeliveryJob;
  leased: boolean;
  /** When the current lease runs out (ms since the epoch). */
  leaseEnds: number;
  /** Bumped at each lease, so an old record in `leases` is recognised as stale. */
  generation: number;
}

/** A record of one lease, in lease order (leases all last `leaseMs`, so also in expiry order). */
interface Lease {
  entry: Entry;
  generation: number;
}

interface Scheduled {
  dueAt: number;
  sequence: number;
  job: DeliveryJob;
}

interface Waiter {
  max: number;
  resolve(leased: LeasedJob[]): void;
  timer: NodeJS.Timeout;
}

const LANES: readonly DeliveryLane[] = ['first', 'retry'];
/** setTimeout's longest delay (about 24.8 days); later wake-ups are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Checks `lease()` arguments as every adapter does.
 * @throws RangeError for a `max` that is not an integer ≥ 1 or a `waitMs` that is not a number ≥ 0.
 */
function checkLeaseArguments(max: number, waitMs: number): void {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be an integer ≥ 1, got ${max}`);
  checkWaitMs(waitMs);
}

/**
 * {@link DeliveryQueue} in this process's memory, for tests, development and single-process
 * servers. **Jobs live only in this process: they are lost when it exits** (pending first
 * attempts, leased jobs and scheduled retries alike), so events recorded while it ran but not yet
 * delivered are not sent after a restart — use `recover` or the Redis queue where that matters.
 *
 * Same guarantees as the Redis queue otherwise (checked by the same contract): each lane is a
 * FIFO; a lease lasts `leaseMs`, after which the job is handed out again (before newer jobs) to
 * the next caller; `ack`/`retry` through a receipt act once per job (a later one, or one from a
 * lost lease after another worker acked, does nothing); a retry waits in a heap ordered by
 * `dueAt` and joins the `retry` lane when due. Every operation is one synchronous section, so
 * concurrent callers never see half of one. Jobs are kept as deep-frozen copies (`frozenCopy`)
 * and handed out as kept: neither the caller's input nor a leased job aliases the queue's state.
 * Waiting `lease` calls are woken by enqueues, due retries and expired leases, on timers that
 * exist only while someone waits.
 */
export class MemoryDeliveryQueue implements DeliveryQueue {
  readonly leaseMs: number;
  private readonly ready: Record<DeliveryLane, Fifo<Entry>> = { first: new Fifo(), retry: new Fifo() };
  private readonly leases: Record<DeliveryLane, Fifo<Lease>> = { first: new Fifo(), retry: new Fifo() };
  private readonly waiters: Record<DeliveryLane, Waiter[]> = { first: [], retry: [] };
  private readonly scheduled = new MinHeap<Scheduled>((a, b) => a.dueAt - b.dueAt || a.sequence - b.sequence);
  /** Entries leased and neither acked nor rescheduled, by receipt. */
  private readonly held = new Map<string, Entry>();
  private sequence = 0;
  private wakeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** @throws RangeError for a `leaseMs` that is not a positive integer. */
  constructor(options: MemoryDeliveryQueueOptions = {}) {
    this.leaseMs = positiveInteger(options.leaseMs, DEFAULT_DELIVERY_LEASE_MS, 'leaseMs');
  }

  async enqueue(jobs: readonly DeliveryJob[]): Promise<void> {
    const copies = jobs.map((job) => frozenCopy(job));
    for (const job of copies) this.push('first', job);
    this.pump();
  }

  async lease(lane: DeliveryLane, max: number, waitMs: number): Promise<LeasedJob[]> {
    checkLeaseArguments(max, waitMs);
    this.promote(Date.now());
    const leased = this.take(lane, max, Date.now());
    if (leased.length > 0 || waitMs === 0 || this.closed) return leased;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        max,
        resolve,
        timer: setTimeout(
          () => {
            this.waiters[lane].splice(this.waiters[lane].indexOf(waiter), 1);
            resolve([]);
          },
          Math.min(waitMs, MAX_TIMER_MS),
        ),
      };
      this.waiters[lane].push(waiter);
      this.arm();
    });
  }

  async ack(leased: LeasedJob): Promise<void> {
    this.release(leased.receipt);
  }

  async retry(leased: LeasedJob, next: DeliveryJob, dueAt: number): Promise<void> {
    if (!Number.isFinite(dueAt)) throw new RangeError(`dueAt must be ms since the epoch, got ${dueAt}`);
    const job = frozenCopy(next);
    if (!this.release(leased.receipt)) return;
    this.scheduled.push({ dueAt, sequence: this.sequence++, job });
    this.pump();
  }

  async stats(): Promise<DeliveryQueueStats> {
    this.promote(Date.now());
    // Expired leases not yet taken over still count as leased, as on Redis.
    return {
      first: this.ready.first.size,
      retry: this.ready.retry.size,
      scheduled: this.scheduled.size,
      leased: this.held.size,
    };
  }

  /** Ends every waiting `lease` with `[]` and stops its timers; later `lease` calls do not wait. Jobs stay. */
  async close(): Promise<void> {
    this.closed = true;
    for (const lane of LANES) {
      for (const waiter of this.waiters[lane].splice(0)) {
        clearTimeout(waiter.timer);
        waiter.resolve([]);
      }
    }
    clearTimeout(this.wakeTimer);
  }

  private push(lane: DeliveryLane, job: DeliveryJob): void {
    const receipt = `${lane}/${this.sequence++}`;
    this.ready[lane].push({ receipt, lane, job, leased: false, leaseEnds: 0, generation: 0 });
  }

  /** Removes a held entry; false when the receipt names no held job (acked, rescheduled, unknown). */
  private release(receipt: string): boolean {
    const entry = this.held.get(receipt);
    if (!entry) return false;
    this.held.delete(receipt);
    entry.leased = false;
    return true;
  }

  /** Moves due retries into the `retry` lane, in due order. */
  private promote(now: number): void {
    while (this.scheduled.size > 0 && this.scheduled.peek()!.dueAt <= now)
      this.push('retry', this.scheduled.pop()!.job);
  }

  /** The oldest live lease record of `lane`, dropping stale ones (acked, or leased again since). */
  private oldestLease(lane: DeliveryLane): Lease | undefined {
    const leases = this.leases[lane];
    for (let lease = leases.peek(); lease; lease = leases.peek()) {
      if (lease.entry.leased && lease.entry.generation === lease.generation) return lease;
      leases.shift();
    }
    return undefined;
  }

  /** Leases up to `max` jobs of `lane`: expired leases first (they are the oldest jobs), then ready ones. */
  private take(lane: DeliveryLane, max: number, now: number): LeasedJob[] {
    const taken: Entry[] = [];
    for (
      let lease = this.oldestLease(lane);
      lease && lease.entry.leaseEnds <= now && taken.length < max;
      lease = this.oldestLease(lane)
    ) {
      this.leases[lane].shift();
      taken.push(lease.entry);
    }
    while (taken.length < max && this.ready[lane].size > 0) taken.push(this.ready[lane].shift()!);
    return taken.map((entry) => {
      entry.leased = true;
      entry.leaseEnds = now + this.leaseMs;
      entry.generation += 1;
      this.held.set(entry.receipt, entry);
      this.leases[lane].push({ entry, generation: entry.generation });
      return { job: entry.job, receipt: entry.receipt };
    });
  }

  /** Serves waiting `lease` calls, oldest first, with whatever is ready now; then re-arms the wake-up. */
  private pump(): void {
    const now = Date.now();
    this.promote(now);
    for (const lane of LANES) {
      const waiters = this.waiters[lane];
      while (waiters.length > 0) {
        const leased = this.take(lane, waiters[0]!.max, now);
        if (leased.length === 0) break;
        const waiter = waiters.shift()!;
        clearTimeout(waiter.timer);
        waiter.resolve(leased);
      }
    }
    this.arm();
  }

  /** Sets one timer for the next moment a waiter could be served: a retry falling due or a lease running out. */
  private arm(): void {
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    let next = Infinity;
    for (const lane of LANES) {
      if (this.waiters[lane].length === 0) continue;
      next = Math.min(next, this.oldestLease(lane)?.entry.leaseEnds ?? Infinity);
      if (lane === 'retry' && this.scheduled.size > 0) next = Math.min(next, this.scheduled.peek()!.dueAt);
    }
    if (next === Infinity) return;
    this.wakeTimer = setTimeout(() => this.pump(), Math.min(Math.max(next - Date.now(), 0), MAX_TIMER_MS));
    // The waiters' own timers keep the process alive while they wait; this one need not.
    this.wakeTimer.unref();
  }
}
