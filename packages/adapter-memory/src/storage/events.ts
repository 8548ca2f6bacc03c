/** @module The event log and its outbox in memory (memory-event-log.ts holds them). */
import type { EventOutbox, EventStore } from '@parley/core/adapter';
import type { StoreContext } from './context.js';

/** `storage.events` in memory. */
export function eventStore({ log }: StoreContext): EventStore {
  return {
    get: async ({ workspaceId }, id) => log.get(workspaceId, id),
    list: async ({ workspaceId }, query) => log.list(workspaceId, query),
  };
}

/** `storage.outbox` in memory. */
export function outboxStore({ log }: StoreContext): EventOutbox {
  return {
    take: (max, waitMs) => log.take(max, waitMs),
    ack: async (batch) => log.ack(batch),
  };
}
