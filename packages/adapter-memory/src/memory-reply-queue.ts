/** @module The reply queue in this process's memory: a FIFO per conversation with leases; lost on exit. */
import type { CancelledReplyJobs, ReplyClaim } from '@parley/core/adapter';
import {
  checkWaitMs,
  DEFAULT_REPLY_LEASE_MS,
  positiveInteger,
  type LeasedReply,
  type ReplyJob,
  type ReplyQueue,
  type WorkspaceScope,
} from '@parley/core/adapter';

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
 * conversations with a job and no live lease whose oldest job the claim covers, the one whose
 * oldest job was asked first (a scan of the conversations with pending replies: few at any time).
 */
export class MemoryReplyQueue implements ReplyQueue {
  private readonly leaseMs: number;
  private readonly fifos = new Map<string, ReplyJob[]>();
  private readonly leases = new Map<string, Lease>();
  /** Conversations whose head job was cancelled while leased: kept until acked (see `cancel`). */
  private readonly cancelledHeads = new Set<string>();
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

  async lease(waitMs: number, claim: ReplyClaim): Promise<LeasedReply | null> {
    checkWaitMs(waitMs);
    const deadline = Date.now() + waitMs;
    const models = new Set(claim.models);
    const overdue = (job: ReplyJob) => claim.askedBefore !== undefined && job.requestedAt < claim.askedBefore;
    const covers = (job: ReplyJob) => job.model === '' || models.has(job.model) || overdue(job);
    for (;;) {
      const leased = this.take(covers);
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

  async reroute(leased: LeasedReply, model: string): Promise<boolean> {
    const key = keyOf(leased.job);
    if (!this.liveLease(leased)) return false;
    this.leases.delete(key);
    const head = this.fifos.get(key)?.[0];
    if (head) head.model = model;
    for (const waiter of this.waiters) waiter.resolve();
    return true;
  }

  async ack(leased: LeasedReply): Promise<boolean> {
    const key = keyOf(leased.job);
    if (!this.liveLease(leased)) return false;
    this.leases.delete(key);
    this.cancelledHeads.delete(key);
    const fifo = this.fifos.get(key);
    fifo?.shift();
    if (fifo?.length === 0) this.fifos.delete(key);
    for (const waiter of this.waiters) waiter.resolve();
    return true;
  }

  async waiting(scope: WorkspaceScope, conversationId: string): Promise<number> {
    return this.fifos.get(keyOf({ workspaceId: scope.workspaceId, conversationId }))?.length ?? 0;
  }

  async cancel(scope: WorkspaceScope, conversationId: string): Promise<CancelledReplyJobs> {
    const key = keyOf({ workspaceId: scope.workspaceId, conversationId });
    const fifo = this.fifos.get(key) ?? [];
    const lease = this.leases.get(key);
    const live = lease !== undefined && lease.expiresAt > Date.now();
    const running = live && !this.cancelledHeads.has(key) ? [structuredClone(fifo[0]!)] : [];
    // One synchronous section: no lease, ack or enqueue can come between.
    const removed = fifo.splice(live ? 1 : 0);
    if (live) this.cancelledHeads.add(key);
    else {
      this.leases.delete(key);
      this.cancelledHeads.delete(key);
      this.fifos.delete(key);
    }
    return { removed, running };
  }

  async cancelled(leases: readonly LeasedReply[]): Promise<string[]> {
    return leases
      .filter((leased) => this.cancelledHeads.has(keyOf(leased.job)) && this.liveLease(leased))
      .map((leased) => leased.receipt);
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

  private take(covers: (job: ReplyJob) => boolean): LeasedReply | null {
    const now = Date.now();
    let best: { key: string; job: ReplyJob } | undefined;
    for (const [key, fifo] of this.fifos) {
      const lease = this.leases.get(key);
      if (lease && lease.expiresAt > now) continue;
      const head = fifo[0];
      if (head && covers(head) && (!best || head.requestedAt < best.job.requestedAt)) best = { key, job: head };
    }
    if (!best) return null;
    const receipt = `${best.key}\u0000${(this.sequence += 1)}`;
    this.leases.set(best.key, { receipt, expiresAt: now + this.leaseMs });
    const leased: LeasedReply = { job: structuredClone(best.job), receipt };
    return this.cancelledHeads.has(best.key) ? { ...leased, cancelled: true } : leased;
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
