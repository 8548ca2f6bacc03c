/** @module One JSON log line per request. */
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../logger.js';
import type { ParleyEnv } from '../env.js';

/** Options of {@link requestLogger}. */
export interface RequestLoggerOptions {
  /** Where the request lines go (at `info`). */
  logger: Logger;
}

/**
 * Logs each finished request at `info` as `{requestId, method, path, status, durationMs}`.
 * Place it after `requestId()` so the id is known, and outside every other middleware so the
 * status is the one sent, error responses included (the error handler has already run by then).
 * The query string is left out: it may carry cursors and filters that belong to callers.
 */
export function requestLogger(options: RequestLoggerOptions): MiddlewareHandler<ParleyEnv> {
  return async function requestLogger(c, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      options.logger.info(
        {
          requestId: c.get('requestId'),
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          durationMs: Math.round((performance.now() - started) * 100) / 100,
        },
        'request',
      );
    }
  };
}
