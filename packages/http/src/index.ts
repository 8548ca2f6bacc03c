/**
 * @module @parley/http: Parley's HTTP API as an embeddable Hono app, the plants sandbox, the
 * OpenAPI document and the pieces a host reuses (error rendering, rate-limit headers, logger).
 * It loads no Redis client and no server: the ready-made server, its configuration and the
 * `parley` command live behind `@parley/http/server`.
 */
export { createApp, type AppOptions } from './app/app.js';
export { createSandboxApp, type SandboxOptions } from './sandbox/sandbox-app.js';
export { memoryPlantStore, type PlantStore } from './sandbox/plant-store.js';
export { plantStoreFor } from './sandbox/plant-store-for.js';
export type { Plant } from './sandbox/plant-schemas.js';
export { createOpenApiDocument } from './app/openapi/document.js';
export { STATUS_BY_CODE } from './app/http-errors.js';
export { toErrorResponse, type ErrorHandlerOptions, type ErrorShape } from './app/middleware/error-handler.js';
export { rateLimit, rateLimitHeaders, type RateLimitOptions } from './app/middleware/rate-limit.js';
export { createMetrics, type MetricsOptions, type ParleyMetrics } from './app/metrics/metrics.js';
export { requestMetrics } from './app/metrics/metrics-middleware.js';
export {
  createLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LoggerOptions,
  type LogLevel,
  type Logger,
} from './app/logger.js';
export { DEFAULT_BODY_LIMIT_BYTES } from './app/middleware/json-body.js';
export type { ParleyEnv } from './app/env.js';
