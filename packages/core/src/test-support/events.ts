/** @module Test helper: a workspace's whole event log, read back from storage. */
import type { Storage } from '../ports/storage.js';
import type { DomainEvent } from '../types.js';

/** Every retained event of `workspaceId` in commit order, paging `storage.events.list` to the end. */
export async function recordedEvents(storage: Storage, workspaceId = 'ws1'): Promise<DomainEvent[]> {
  const events: DomainEvent[] = [];
  for (;;) {
    const page = await storage.events.list({ workspaceId }, { after: events.at(-1)?.id, limit: 100 });
    if (!page) throw new Error('The event log lost its own cursor.');
    events.push(...page.events);
    if (!page.hasMore) return events;
  }
}
