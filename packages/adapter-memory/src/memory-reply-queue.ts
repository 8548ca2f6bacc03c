/** @module The reply queue in this process's memory: a FIFO per conversation with leases; lost on exit. */
import { checkWaitMs, DEFAULT_REPLY_LEASE_MS, positiveInteger, type LeasedReply, type ReplyJob, type ReplyQueue } from '@parley/core';

/** Options of {@link MemoryReplyQueue}. */
export interface MemoryReplyQueueOptions {
  /** How long a lease holds a conversation unless renewed, in ms; default 30 000. */
  leaseMs?: number;
}

interface Lease {
  receipt: string;
  expiresAt: number;
}

interface Waiter {
  resolve(): void;
}

/**
 * {@link ReplyQueue} in this process's memory, for tests, development and single-process servers.
 * **Requests live only in this process: they are lost when it exits.** A lease picks, among the
 * conversations with a job and no live lease, the one whose oldest job was asked first (a scan of
 * the conversations with pending replies: few at any time).
 */
export class MemoryReplyQueue implements ReplyQueue {
  private readonly leaseMs: number;
  private readonly fifos = new Map<string, ReplyJob[]>();
  private readonly leases = new Map<string, Lease>();
  private readonly waiters = new Set<Waiter>();
  private sequence = 0;
  private closed = false;

  /** @throws RangeError when `leaseMs` is not an integer ≥ 1 */
  constructor(options: MemoryReplyQueueOptions = {}) {
    this.leaseMs = positiveInteger(options.leaseMs, DEFAULT_REPLY_LEASE_MS, 'leaseMs');
  }

  async enqueue(job: ReplyJob): Promise<void> {
    const key = keyOf(job);
    const fifo = this.fifos.get(key);
    if (fifo) fifo.push(structuredClone(job));
    else this.fifos.set(key, [structuredClone(job)]);
    for (const waiter of this.waiters) waiter.resolve();
  }

  async lease(waitMs: number): Promise<LeasedReply | null> {
    checkWaitMs(waitMs);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const leased = this.take();
      if (leased || this.closed) return leased;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await this.wait(Math.min(left, this.nextExpiry() - Date.now()));
    }
  }

  async extend(leased: LeasedReply): Promise<boolean> {
    const lease = this.liveLease(leased);
    if (!lease) return false;
    lease.expiresAt = Date.now() + this.leaseMs;
    return true;
  }

  async ack(leased: LeasedReply): Promise<boolean> {
    const key = keyOf(leased.job);
    if (!this.liveLease(leased)) return false;
    this.leases.delete(key);
    const fifo = this.fifos.get(key);
    fifo?.shift();
    if (fifo?.length === 0) this.fifos.delete(key);
    for (const waiter of this.waiters) waiter.resolve();
    return true;
  }

  async size(): Promise<number> {
    let total = 0;
    for (const fifo of this.fifos.values()) total += fifo.length;
    return total;
  }

  /** Ends waiting leases with `null`; later leases do not wait. Jobs stay. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters) waiter.resolve();
  }

  private liveLease(leased: LeasedReply): Lease | undefined {
    const lease = this.leases.get(keyOf(leased.job));
    return lease && lease.receipt === leased.receipt && lease.expiresAt > Date.now() ? lease : undefined;
  }

  private take(): LeasedReply | null {
    const now = Date.now();
    let best: { key: string; job: ReplyJob } | undefined;
    for (const [key, fifo] of this.fifos) {
      const lease = this.leases.get(key);
      if (lease && lease.expiresAt > now) continue;
      const head = fifo[0];
      if (head && (!best || head.requestedAt < best.job.requestedAt)) best = { key, job: head };
    }
    if (!best) return null;
    const receipt = `${best.key}\u0000${(this.sequence += 1)}`;
    this.leases.set(best.key, { receipt, expiresAt: now + this.leaseMs });
    return { job: structuredClone(best.job), receipt };
  }

  /** When the earliest live lease ends (a waiting lease may take its conversation then). */
  private nextExpiry(): number {
    let next = Number.POSITIVE_INFINITY;
    for (const lease of this.leases.values()) next = Math.min(next, lease.expiresAt);
    return next;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.resolve, Math.max(1, ms));
      this.waiters.add(waiter);
    });
  }
}

function keyOf(job: Pick<ReplyJob, 'workspaceId' | 'conversationId'>): string {
  return `${job.workspaceId}\u0000${job.conversationId}`;
}
