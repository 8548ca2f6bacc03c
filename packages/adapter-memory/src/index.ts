/** @module @parley/adapter-memory: Parley's ports implemented in this process's memory. */
import { MemoryApiKeyStore } from './memory-api-keys.js';
import { MemoryEventPublisher } from './memory-events.js';
import { MemoryStorage } from './memory-storage.js';
import { MemoryRateLimitStore } from './memory-rate-limit.js';

export { MemoryApiKeyStore, MemoryEventPublisher, MemoryStorage };
export type { EventListener } from './memory-events.js';
export { MemoryRateLimitStore, type MemoryRateLimitStoreOptions } from './memory-rate-limit.js';
export { MemoryDeliveryQueue, type MemoryDeliveryQueueOptions } from './memory-delivery-queue.js';
export { MemoryReplyQueue, type MemoryReplyQueueOptions } from './memory-reply-queue.js';

/**
 * A fresh set of memory adapters, ready for `createCore(memoryAdapters())`:
 * `{ storage: MemoryStorage, apiKeys: MemoryApiKeyStore, events: MemoryEventPublisher,
 * rateLimits: MemoryRateLimitStore }`.
 */
export function memoryAdapters() {
  return {
    storage: new MemoryStorage(),
    apiKeys: new MemoryApiKeyStore(),
    events: new MemoryEventPublisher(),
    rateLimits: new MemoryRateLimitStore(),
  };
}
