/** @module @parley/adapter-memory: Parley's ports implemented in this process's memory. */
import { MemoryApiKeyStore } from './memory-api-keys.js';
import { MemoryDeliveryQueue } from './memory-delivery-queue.js';
import { MemoryStorage, type MemoryStorageOptions } from './memory-storage.js';
import { MemoryRateLimitStore } from './memory-rate-limit.js';
import { MemoryIdempotencyStore } from './memory-idempotency.js';
import { MemoryReplyQueue } from './memory-reply-queue.js';

export { MemoryApiKeyStore, MemoryDeliveryQueue, MemoryIdempotencyStore, MemoryStorage };
export { DEFAULT_EVENT_RETENTION_MS, DEFAULT_OUTBOX_LEASE_MS, type MemoryStorageOptions } from './memory-storage.js';
export { MemoryRateLimitStore, type MemoryRateLimitStoreOptions } from './memory-rate-limit.js';
export type { MemoryDeliveryQueueOptions } from './memory-delivery-queue.js';
export { MemoryReplyQueue };
export type { MemoryReplyQueueOptions } from './memory-reply-queue.js';

/**
 * A fresh set of memory adapters, ready for `createCore(memoryAdapters())`:
 * `{ storage: MemoryStorage, apiKeys: MemoryApiKeyStore, rateLimits: MemoryRateLimitStore,
 * deliveryQueue: MemoryDeliveryQueue, idempotency: MemoryIdempotencyStore, replyQueue:
 * MemoryReplyQueue }`. `storage` takes `options` (retention, outbox lease).
 */
export function memoryAdapters(options: { storage?: MemoryStorageOptions } = {}) {
  return {
    storage: new MemoryStorage(options.storage),
    apiKeys: new MemoryApiKeyStore(),
    rateLimits: new MemoryRateLimitStore(),
    deliveryQueue: new MemoryDeliveryQueue(),
    idempotency: new MemoryIdempotencyStore(),
    replyQueue: new MemoryReplyQueue(),
  };
}
