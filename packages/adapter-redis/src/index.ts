/** @module @parley/adapter-redis: Parley's ports on Redis (standalone or Cluster), via ioredis. */
export { RedisStorage, type RedisStorageOptions } from './redis-storage.js';
export { RedisApiKeyStore } from './redis-api-keys.js';
export { RedisRateLimitStore } from './redis-rate-limits.js';
export { RedisIdempotencyStore } from './redis-idempotency.js';
export {
  redisAdapters,
  type RedisAdapters,
  type RedisAdaptersOptions,
  type RedisConnection,
} from './redis-adapters.js';
export {
  DEFAULT_TIMEOUT_MS,
  resilientRedisOptions,
  type RedisAdapterOptions,
  type RedisClient,
  type RedisTarget,
} from './connection.js';
export { DEFAULT_PREFIX } from './keys.js';
export { isConnectionFault, redactRedisError } from './faults.js';
export { RedisDeliveryQueue, type RedisDeliveryQueueOptions } from './delivery-queue/redis-delivery-queue.js';
export { RedisReplyQueue, type RedisReplyQueueOptions } from './replies/redis-reply-queue.js';
export { RedisConversationFeed } from './replies/redis-conversation-feed.js';
