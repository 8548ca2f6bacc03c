/** @module The memory adapter's deliveries log: each endpoint's attempts, sorted by id. */
import type { DeliveryAttempt } from '@parley/core';
import { frozenCopy, isSuccess, type Clock, type DeliveryPage } from '@parley/core/adapter';
import { lowerBound } from './sorted.js';

interface Logged {
  id: string;
  recordedAt: number;
  attempt: DeliveryAttempt;
}

/**
 * Delivery attempts per workspace and endpoint, stored deep-frozen and handed out as stored (no
 * copy per read), kept for the event retention (older ones are neither read nor listed, and
 * trimmed in bounded steps on write). Synchronous; `MemoryStorage` checks the endpoint exists in
 * the same section as `record`.
 */
export class MemoryDeliveryLog {
  /** Key `workspaceId\u0000endpointId` → attempts sorted by id ascending. */
  private readonly logs = new Map<string, Logged[]>();

  constructor(private readonly options: { clock: Clock; retentionMs: number }) {}

  private key(workspaceId: string, endpointId: string): string {
    return `${workspaceId}\u0000${endpointId}`;
  }

  private oldestRetained(): number {
    return this.options.clock.now() - this.options.retentionMs;
  }

  /** Index of the first retained attempt: the expired ones not trimmed yet are a (short) prefix. */
  private firstRetained(log: readonly Logged[]): number {
    const oldest = this.oldestRetained();
    let first = 0;
    while (first < log.length && log[first]!.recordedAt < oldest) first += 1;
    return first;
  }

  record(workspaceId: string, attempt: DeliveryAttempt): void {
    const key = this.key(workspaceId, attempt.endpointId);
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = []));
    // Trimmed in bounded steps: ids grow with time, so the expired attempts are mostly the oldest.
    const oldest = this.oldestRetained();
    let expired = 0;
    while (expired < 64 && expired < log.length && log[expired]!.recordedAt < oldest) expired += 1;
    if (expired > 0) log.splice(0, expired);
    log.splice(lowerBound(log, attempt.id), 0, {
      id: attempt.id,
      recordedAt: this.options.clock.now(),
      attempt: frozenCopy(attempt),
    });
  }

  get(workspaceId: string, endpointId: string, id: string): DeliveryAttempt | null {
    const log = this.logs.get(this.key(workspaceId, endpointId)) ?? [];
    const logged = log[lowerBound(log, id)];
    return logged?.id === id && logged.recordedAt >= this.oldestRetained() ? logged.attempt : null;
  }

  list(
    workspaceId: string,
    endpointId: string,
    { before, limit, eventId }: { before?: string; limit: number; eventId?: string },
  ): DeliveryPage | null {
    const log = this.logs.get(this.key(workspaceId, endpointId)) ?? [];
    const first = this.firstRetained(log);
    let end = log.length;
    if (before !== undefined) {
      end = lowerBound(log, before);
      if (end < first || log[end]?.id !== before) return null;
    }
    // Without a filter the page is the `limit` entries below `end`: O(limit).
    const older =
      eventId === undefined
        ? log.slice(Math.max(first, end - limit - 1), end)
        : log.slice(first, end).filter((logged) => logged.attempt.eventId === eventId);
    const start = Math.max(0, older.length - limit);
    return {
      deliveries: older
        .slice(start)
        .reverse()
        .map((logged) => logged.attempt),
      hasMore: start > 0,
    };
  }

  delivered(workspaceId: string, endpointId: string, eventIds: readonly string[]): Set<string> {
    const wanted = new Set(eventIds);
    const delivered = new Set<string>();
    const log = this.logs.get(this.key(workspaceId, endpointId)) ?? [];
    for (const { attempt } of log.slice(this.firstRetained(log))) {
      if (wanted.has(attempt.eventId) && isSuccess(attempt.status)) delivered.add(attempt.eventId);
    }
    return delivered;
  }

  /** Forgets an endpoint's log (the endpoint was deleted). */
  remove(workspaceId: string, endpointId: string): void {
    this.logs.delete(this.key(workspaceId, endpointId));
  }
}
