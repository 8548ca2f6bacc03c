/**
 * @module PLACEHOLDER MemoryDeliveryQueue so the memory adapter compiles before the
 * `delivery-queue` branch lands; that branch's file replaces this one whole (take theirs on merge).
 */
import type { DeliveryJob, DeliveryLane, DeliveryQueue, DeliveryQueueStats, LeasedJob } from '@parley/core';

/** A minimal in-process {@link DeliveryQueue} (no lease expiry, polling waits). Lost on exit. */
export class MemoryDeliveryQueue implements DeliveryQueue {
  private readonly ready: Record<DeliveryLane, DeliveryJob[]> = { first: [], retry: [] };
  private readonly scheduled: Array<{ job: DeliveryJob; dueAt: number }> = [];
  private readonly leased = new Map<string, DeliveryJob>();
  private receipts = 0;

  async enqueue(jobs: readonly DeliveryJob[]): Promise<void> {
    this.ready.first.push(...jobs.map((job) => structuredClone(job)));
  }

  async lease(lane: DeliveryLane, max: number, waitMs: number): Promise<LeasedJob[]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      this.promote();
      const jobs = this.ready[lane]!.splice(0, max);
      if (jobs.length > 0 || Date.now() >= deadline) {
        return jobs.map((job) => {
          const receipt = String(++this.receipts);
          this.leased.set(receipt, job);
          return { job: structuredClone(job), receipt };
        });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, deadline - Date.now())));
    }
  }

  async ack(leased: LeasedJob): Promise<void> {
    this.leased.delete(leased.receipt);
  }

  async retry(leased: LeasedJob, next: DeliveryJob, dueAt: number): Promise<void> {
    this.leased.delete(leased.receipt);
    this.scheduled.push({ job: structuredClone(next), dueAt });
  }

  async stats(): Promise<DeliveryQueueStats> {
    this.promote();
    return { first: this.ready.first.length, retry: this.ready.retry.length, scheduled: this.scheduled.length, leased: this.leased.size };
  }

  private promote(): void {
    const now = Date.now();
    for (let index = this.scheduled.length - 1; index >= 0; index -= 1) {
      if (this.scheduled[index]!.dueAt <= now) this.ready.retry.push(this.scheduled.splice(index, 1)[0]!.job);
    }
  }
}
