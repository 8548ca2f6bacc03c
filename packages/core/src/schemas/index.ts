/** @module Every request and response schema: the single source of truth for validation and OpenAPI. */
export * from './common.js';
export * from './agent.js';
export * from './conversation.js';
export * from './webhook.js';
export * from './plant.js';
export * from './responses.js';
