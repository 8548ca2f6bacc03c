/** @module Webhook delivery: signing, the transport, the worker and the operator actions. */
export * from './signing.js';
export * from './undici-transport.js';
export * from './retry-schedule.js';
export * from './attempt.js';
export * from './delivery-worker.js';
export * from './delivery-service.js';
export * from './example-events.js';
