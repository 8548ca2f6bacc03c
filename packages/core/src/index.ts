/** @module @parley/core: Parley's domain services, schemas, errors and ports. */
import './di.js';
export type { DependencyContainer } from './di.js';

export * from './types.js';
export * from './errors.js';
export * from './tokens.js';
export * from './validation.js';
export * from './ports/index.js';
export * from './schemas/index.js';
export * from './services/agent-service.js';
export * from './services/conversation-service.js';
export * from './services/webhook-service.js';
export * from './services/event-service.js';
export * from './services/webhook-targets.js';
export * from './services/plant-service.js';
export * from './services/api-key-service.js';
export * from './services/api-key-grant.js';
export * from './services/api-key-format.js';
export * from './services/entity-tag.js';
export { encodeCursor } from './services/cursor.js';
export * from './rate-limit/gcra.js';
export * from './rate-limit/plans.js';
export * from './rate-limit/rate-limiter.js';
export * from './create-core.js';
export * from './delivery/index.js';
