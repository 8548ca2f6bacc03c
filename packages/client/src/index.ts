/**
 * @module @parley/client: a typed client for Parley's HTTP API. Its types are generated from the
 * OpenAPI document the server publishes (`GET /openapi.json`) by openapi-typescript; requests go
 * through openapi-fetch.
 */
export {
  createParleyClient,
  type CreateOptions,
  type IterateOptions,
  type WriteOptions,
  type ParleyClient,
  type ParleyClientOptions,
} from './client.js';
export type {
  ContextTrimmed,
  ConversationStreamEvent,
  ConversationStreamOptions,
  ReplyDelta,
  ReplyFailed,
  ToolCallDecided,
} from './conversation-stream.js';
export {
  isParleyApiError,
  isParleyNetworkError,
  ParleyApiError,
  ParleyNetworkError,
  type ApiErrorBody,
  type ErrorCode,
  type ErrorDetails,
} from './errors.js';
/** The generated OpenAPI types, for `raw` calls and your own helpers. */
export type { components, operations, paths } from './generated/openapi.js';
export type * from './types.js';
