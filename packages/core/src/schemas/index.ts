/** @module Every request and response schema: the single source of truth for validation and OpenAPI. */
// The builders of common.ts (`text`, `integerParam`, `PageQueryEntries`) stay internal: the
// public surface is the schemas themselves and the limits they enforce.
export { JsonObjectSchema, MAX_JSON_OBJECT_BYTES, MAX_JSON_OBJECT_DEPTH, PAGE_LIMIT } from './common.js';
export * from './agent.js';
export * from './tools.js';
export * from './conversation.js';
export * from './webhook.js';
export * from './event.js';
export * from './plant.js';
export * from './responses.js';
export * from './delivery.js';
