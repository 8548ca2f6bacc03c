/** @module What every request gets first: its id, its response header fields, its log line. */
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../logger.js';
import type { ParleyEnv } from '../env.js';
import { applyHeaderFields, newHeaderFields } from '../response.js';
import { compressJsonResponse } from './compress-json.js';

/** Options of {@link requestContext}. */
export interface RequestContextOptions {
  /** Where the request lines go (at `info`). */
  logger: Logger;
  /** Compress large JSON responses for clients that accept it (`compress-json.ts`); default true. */
  compression?: boolean;
}

/** The longest incoming `X-Request-Id` that is kept. */
const MAX_REQUEST_ID_LENGTH = 255;
/** What a kept incoming `X-Request-Id` may contain: letters, digits, `_`, `-` and `=`. */
const SANE_REQUEST_ID = /^[\w\-=]+$/;

/**
 * The outermost Parley middleware, one step for four jobs:
 * - the request id: a sane incoming `X-Request-Id` (at most 255 letters, digits, `_`, `-` or `=`)
 *   is kept, otherwise a random UUID; it is `c.var.requestId` and the response's `X-Request-Id`;
 * - the response header fields (`response.ts`): the record starts here, and after the pipeline it
 *   is copied onto a response that was not built with it;
 * - compression: large JSON responses are compressed when the client accepts it, after the
 *   pipeline and before the fields are copied (`compress-json.ts`);
 * - the request log: at `info`, one line per finished request, `{requestId, method, path, status,
 *   durationMs}`, with the status sent (error responses included: the error handler has run by
 *   then). The query string is left out: it may carry cursors and filters that belong to callers.
 */
export function requestContext(options: RequestContextOptions): MiddlewareHandler<ParleyEnv> {
  const { logger } = options;
  const compression = options.compression ?? true;
  return async function requestContext(c, next) {
    const started = performance.now();
    const incoming = c.req.header('X-Request-Id');
    const requestId =
      incoming !== undefined && incoming.length <= MAX_REQUEST_ID_LENGTH && SANE_REQUEST_ID.test(incoming)
        ? incoming
        : randomUUID();
    c.set('requestId', requestId);
    c.set('responseHeaders', newHeaderFields({ 'x-request-id': requestId }));
    try {
      await next();
      if (compression) await compressJsonResponse(c);
      applyHeaderFields(c);
    } finally {
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            requestId,
            method: c.req.method,
            path: c.req.path,
            status: c.res.status,
            durationMs: Math.round((performance.now() - started) * 100) / 100,
          },
          'request',
        );
      }
    }
  };
}
