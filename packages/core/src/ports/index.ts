/** @module The ports adapters implement. */
export type * from './adapters.js';
export type * from './storage.js';
export type * from './api-keys.js';
export type * from './delivery-queue.js';
export type * from './webhook-transport.js';
export type * from './language-model.js';
export type * from './reply-queue.js';
export type * from './conversation-feed.js';
export * from './clock.js';
export * from './ids.js';
export type * from './rate-limit.js';
export type * from './idempotency.js';
export * from './logger.js';
export * from './webhook-targets.js';
