/** @module @parley/adapter-memory: every port Parley needs, in this process's memory. */
import { InProcessConversationFeed, type Adapters } from '@parley/core/adapter';
import { MemoryApiKeyStore } from './memory-api-keys.js';
import { MemoryDeliveryQueue, type MemoryDeliveryQueueOptions } from './memory-delivery-queue.js';
import { MemoryIdempotencyStore, type MemoryIdempotencyStoreOptions } from './memory-idempotency.js';
import { MemoryRateLimitStore } from './memory-rate-limit.js';
import { MemoryReplyQueue, type MemoryReplyQueueOptions } from './memory-reply-queue.js';
import { MemoryStorage, type MemoryStorageOptions } from './memory-storage.js';

export { MemoryApiKeyStore, MemoryDeliveryQueue, MemoryIdempotencyStore, MemoryReplyQueue, MemoryStorage };
export type {
  MemoryDeliveryQueueOptions,
  MemoryIdempotencyStoreOptions,
  MemoryReplyQueueOptions,
  MemoryStorageOptions,
};
export { MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE } from './memory-idempotency.js';
export { MemoryRateLimitStore, type MemoryRateLimitStoreOptions } from './memory-rate-limit.js';

/** Options of {@link memoryAdapters}. */
export interface MemoryAdaptersOptions {
  /** Retention, outbox lease and clock of the event log (see {@link MemoryStorageOptions}). */
  storage?: MemoryStorageOptions;
  deliveryQueue?: MemoryDeliveryQueueOptions;
  replyQueue?: MemoryReplyQueueOptions;
  /** How many `Idempotency-Key`s are held per workspace (see {@link MemoryIdempotencyStoreOptions}). */
  idempotency?: MemoryIdempotencyStoreOptions;
}

/**
 * A fresh bundle of memory adapters, ready for `createCore(memoryAdapters())`: every port in this
 * process (`MemoryStorage`, `MemoryApiKeyStore`, `MemoryRateLimitStore`, `MemoryIdempotencyStore`,
 * `MemoryDeliveryQueue`, `MemoryReplyQueue`, an in-process conversation feed). Everything is lost
 * when the process exits; `info.durable` is `false`. `ready()` resolves at once; `close()` wakes the
 * queues' waiting leases so workers stop at once.
 */
export function memoryAdapters(options: MemoryAdaptersOptions = {}): Adapters {
  const deliveryQueue = new MemoryDeliveryQueue(options.deliveryQueue);
  const replyQueue = new MemoryReplyQueue(options.replyQueue);
  return {
    storage: new MemoryStorage(options.storage),
    apiKeys: new MemoryApiKeyStore(),
    rateLimits: new MemoryRateLimitStore(),
    idempotency: new MemoryIdempotencyStore(options.idempotency),
    deliveryQueue,
    replyQueue,
    conversationFeed: new InProcessConversationFeed(),
    info: { name: 'memory', description: 'memory storage: data is lost when the server stops', durable: false },
    ready: async () => {},
    onReconnect: () => {},
    close: async () => {
      await Promise.all([deliveryQueue.close(), replyQueue.close()]);
    },
  };
}
