/**
 * @module The memory adapter's event log and outbox: one log per workspace in commit order, the
 * outbox of events not yet handed on, and leases on it.
 *
 * Every method is synchronous apart from `take`'s wait, so `MemoryStorage` appends an event in the
 * same synchronous section as the change it describes (README, "Events and webhooks").
 */
import type { DomainEvent, EventType } from '@parley/core';
import {
  frozenCopy,
  traceContextOf,
  withoutHiddenFields,
  type Clock,
  type EventPage,
  type OutboxBatch,
  type WorkspaceScope,
} from '@parley/core/adapter';

/** One recorded event, deep-frozen (`frozenCopy`): `seq` is its place in the workspace's commit order. */
interface Entry {
  seq: number;
  recordedAt: number;
  event: DomainEvent;
  /** The W3C trace context it was recorded in (`traceContextOf`), when there was one. */
  traceContext: string | undefined;
}

/** A workspace's log, with a per-type index; expired entries are trimmed from the front. */
class WorkspaceLog {
  private nextSeq = 1;
  /** `entries[head…]` are live; the prefix before `head` waits for compaction. */
  private entries: Entry[] = [];
  private head = 0;
  readonly byId = new Map<string, Entry>();
  private readonly byType = new Map<EventType, { entries: Entry[]; head: number }>();
  /**
   * The outbox: events recorded and not yet acknowledged, in commit order, live from `outboxHead`
   * on. A batch is always its oldest events, so acknowledging one drops a prefix: O(batch), not
   * O(outbox) — a backlog of 10⁶ events drains as fast as a small one. An event still here when it
   * leaves the retention is dropped with it, so a storage nobody takes from stays bounded.
   */
  private outbox: Entry[] = [];
  private outboxHead = 0;
  /** The taker holding this workspace's outbox, until `until` (ms since the epoch). */
  lease: { receipt: string; until: number } | null = null;

  append(event: DomainEvent, now: number, traceContext: string | undefined): void {
    const entry = { seq: this.nextSeq++, recordedAt: now, event, traceContext };
    this.entries.push(entry);
    this.byId.set(event.id, entry);
    let typed = this.byType.get(event.type);
    if (!typed) this.byType.set(event.type, (typed = { entries: [], head: 0 }));
    typed.entries.push(entry);
    this.outbox.push(entry);
  }

  /** How many events wait in the outbox. */
  get pending(): number {
    return this.outbox.length - this.outboxHead;
  }

  /** The oldest `max` entries of the outbox. */
  oldestPending(max: number): Entry[] {
    return this.outbox.slice(this.outboxHead, this.outboxHead + max);
  }

  /**
   * Drops the events of `acked` from the front of the outbox. Only the front can hold them: a batch
   * is a prefix when taken, and the front only ever moves on (by acks and by expiry).
   */
  acknowledge(acked: ReadonlySet<string>): void {
    while (this.outboxHead < this.outbox.length && acked.has(this.outbox[this.outboxHead]!.event.id))
      this.outboxHead += 1;
    this.compactOutbox();
  }

  private compactOutbox(): void {
    if (this.outboxHead * 2 > this.outbox.length) {
      this.outbox = this.outbox.slice(this.outboxHead);
      this.outboxHead = 0;
    }
  }

  /** Drops up to `max` expired entries from the front (bounded work per write). */
  trim(oldest: number, max: number): void {
    let dropped = 0;
    while (dropped < max && this.head < this.entries.length && this.entries[this.head]!.recordedAt < oldest) {
      const entry = this.entries[this.head++]!;
      this.byId.delete(entry.event.id);
      const typed = this.byType.get(entry.event.type)!;
      typed.head += 1;
      dropped += 1;
      // Compacting once half the array is dead keeps trimming O(1) amortised.
      if (typed.head * 2 > typed.entries.length) {
        typed.entries = typed.entries.slice(typed.head);
        typed.head = 0;
      }
    }
    if (this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    let expired = 0;
    while (expired < max && this.outboxHead < this.outbox.length && this.outbox[this.outboxHead]!.recordedAt < oldest) {
      this.outboxHead += 1;
      expired += 1;
    }
    if (expired > 0) this.compactOutbox();
  }

  /** The live entries of `type` (all types when absent), with where they start. */
  view(type: EventType | undefined): { entries: Entry[]; head: number } {
    if (type === undefined) return { entries: this.entries, head: this.head };
    return this.byType.get(type) ?? { entries: [], head: 0 };
  }
}

/** Index of the first entry at or after `head` whose seq is > `seq`: O(log n). */
function firstAfter(entries: readonly Entry[], head: number, seq: number): number {
  let low = head;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.seq <= seq) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Settings of {@link MemoryEventLog}. */
export interface MemoryEventLogOptions {
  clock: Clock;
  retentionMs: number;
  leaseMs: number;
}

/** Entries expired beyond this many are left to later writes (bounded work per write). */
const TRIM_STEP = 64;

/** The event logs and outbox of every workspace of one `MemoryStorage`. */
export class MemoryEventLog {
  private readonly logs = new Map<string, WorkspaceLog>();
  private readonly waiters = new Set<() => void>();
  private receipts = 0;

  constructor(private readonly options: MemoryEventLogOptions) {}

  private log(workspaceId: string): WorkspaceLog {
    let log = this.logs.get(workspaceId);
    if (!log) this.logs.set(workspaceId, (log = new WorkspaceLog()));
    return log;
  }

  private oldestRetained(): number {
    return this.options.clock.now() - this.options.retentionMs;
  }

  /**
   * Records a frozen copy of `event` in its workspace's log and outbox; events are handed out
   * as recorded, never copied per read. Synchronous: call it inside the write. When the event's
   * `data` is `record` (the record the write stored), `stored`, the deep-frozen copy the store
   * keeps of it, is shared instead of copying it again. Its hidden fields (`HIDDEN_FIELDS`) are left
   * out. The outbox keeps the trace context of the write (`traceContextOf(scope)`) beside it.
   */
  record(scope: WorkspaceScope, event: DomainEvent, record?: DomainEvent['data'], stored?: DomainEvent['data']): void {
    const { workspaceId } = scope;
    const log = this.log(workspaceId);
    const recorded = stored !== undefined && event.data === record ? stored : frozenCopy(event.data);
    // Hidden fields (an agent's tools secret) never reach an event, whoever built its data.
    const data =
      recorded !== null && typeof recorded === 'object' ? Object.freeze(withoutHiddenFields(recorded)) : recorded;
    // One literal of the event's fields (all strings, but `data`), not spreads: on Node 20 a spread
    // followed by more properties gives every object a hidden class of its own
    // (bench/PERFORMANCE-NOTES.md, "Node 20's object spread").
    const { id, type, occurredAt } = event;
    log.append(
      Object.freeze({ id, type, workspaceId, occurredAt, data }),
      this.options.clock.now(),
      traceContextOf(scope),
    );
    log.trim(this.oldestRetained(), TRIM_STEP);
    for (const wake of this.waiters) wake();
  }

  get(workspaceId: string, id: string): DomainEvent | null {
    const entry = this.logs.get(workspaceId)?.byId.get(id);
    return entry && entry.recordedAt >= this.oldestRetained() ? entry.event : null;
  }

  list(
    workspaceId: string,
    { after, limit, type }: { after?: string; limit: number; type?: EventType },
  ): EventPage | null {
    const log = this.logs.get(workspaceId);
    const oldest = this.oldestRetained();
    let afterSeq = 0;
    if (after !== undefined) {
      const entry = log?.byId.get(after);
      if (!entry || entry.recordedAt < oldest) return null;
      afterSeq = entry.seq;
    }
    if (!log) return { events: [], hasMore: false };
    const { entries, head } = log.view(type);
    let start = firstAfter(entries, head, afterSeq);
    // Expired entries not trimmed yet form a prefix (recording times only grow along the log).
    while (start < entries.length && entries[start]!.recordedAt < oldest) start += 1;
    const page = entries.slice(start, start + limit);
    return { events: page.map((entry) => entry.event), hasMore: start + limit < entries.length };
  }

  /** One workspace's oldest unacknowledged events that no live lease holds, or `null`. */
  private takeNow(max: number): OutboxBatch | null {
    const now = this.options.clock.now();
    for (const [workspaceId, log] of this.logs) {
      if (log.pending === 0 || (log.lease && log.lease.until > now)) continue;
      const entries = log.oldestPending(max);
      const events = entries.map((entry) => entry.event);
      let traceContexts: Record<string, string> | undefined;
      for (const { event, traceContext } of entries)
        if (traceContext !== undefined) (traceContexts ??= {})[event.id] = traceContext;
      const receipt = `${workspaceId}#${++this.receipts}`;
      log.lease = { receipt, until: now + this.options.leaseMs };
      // Served workspaces go to the back, so one busy workspace cannot starve the others.
      this.logs.delete(workspaceId);
      this.logs.set(workspaceId, log);
      return traceContexts ? { workspaceId, events, receipt, traceContexts } : { workspaceId, events, receipt };
    }
    return null;
  }

  /** When the next live lease over a non-empty outbox ends (ms from now), or `undefined`. */
  private nextLeaseEnd(): number | undefined {
    const now = this.options.clock.now();
    let next: number | undefined;
    for (const log of this.logs.values()) {
      if (log.pending > 0 && log.lease && log.lease.until > now)
        next = Math.min(next ?? Infinity, log.lease.until - now);
    }
    return next;
  }

  async take(max: number, waitMs: number): Promise<OutboxBatch | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const batch = this.takeNow(max);
      if (batch) return batch;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      // Wake on a new event, on the end of a lease that may hand a batch out again, or at the deadline.
      const sleep = Math.min(remaining, this.nextLeaseEnd() ?? remaining);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(1, sleep));
        this.waiters.add(done);
      });
    }
  }

  ack(batch: OutboxBatch): void {
    const log = this.logs.get(batch.workspaceId);
    if (!log) return;
    log.acknowledge(new Set(batch.events.map((event) => event.id)));
    if (log.lease?.receipt === batch.receipt) log.lease = null;
    if (log.pending > 0) for (const wake of this.waiters) wake();
  }
}
