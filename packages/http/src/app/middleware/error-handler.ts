/** @module The single error handler: renders every failure in the API's or the sandbox's shape. */
import { ErrorCode } from '@parley/core';
import type { Context, ErrorHandler } from 'hono';
import { createLogger, type Logger } from '../logger.js';
import type { ParleyEnv } from '../env.js';
import { STATUS_BY_CODE, toHttpError, type HttpError } from '../http-errors.js';
import { BEARER_CHALLENGE } from './bearer-auth.js';
import { builtFrom, headerFieldsOf, headerSet, setHeader } from '../response.js';

/**
 * `api`: `{"error": {"code", "message", "details"?}}` (docs/errors.md).
 * `sandbox`: `{"error": <status>, "message"}` (plants-openapi.json `Error`, docs/sandbox.md).
 */
export type ErrorShape = 'api' | 'sandbox';

/** Options of {@link errorHandler}. */
export interface ErrorHandlerOptions {
  /** Where unexpected errors (500) and storage outages (503) are logged, with their cause. */
  logger: Logger;
  /** Default `api`. */
  shape?: ErrorShape;
}

function render(c: Context<ParleyEnv>, error: HttpError, shape: ErrorShape): Response {
  // Built by Hono from the context, not with response.ts: header fields a host's middleware set
  // with `c.header()` before the error are kept too, with Parley's own.
  const fields = headerFieldsOf(c);
  fields['content-type'] = 'application/json';
  const text = JSON.stringify(
    shape === 'sandbox'
      ? { error: error.status, message: error.message }
      : { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } },
  );
  // Remembered with its text, so compression sizes it without reading it back (compress-json.ts).
  return builtFrom(c, c.body(text, error.status, fields), text);
}

/**
 * Headers a status needs whatever raised it. Header fields that middleware already set (RateLimit
 * fields, `Allow`, a detailed `WWW-Authenticate`; response.ts) are kept: the response is built
 * with them.
 */
function addRequiredHeaders(c: Context<ParleyEnv>, error: HttpError): void {
  if (error.status === 401 && headerSet(c, 'www-authenticate') === undefined)
    setHeader(c, 'WWW-Authenticate', BEARER_CHALLENGE);
  const retryAfter = error.details?.retryAfterSeconds;
  // RFC 9110 §10.2.3: delay-seconds is a non-negative integer; round up so clients never retry early.
  if (error.status === 429 && typeof retryAfter === 'number' && Number.isFinite(retryAfter)) {
    setHeader(c, 'Retry-After', String(Math.max(0, Math.ceil(retryAfter))));
  }
}

/**
 * A host route's `await c.req.json()` of a malformed body throws JSON.parse's `SyntaxError`
 * (Parley's own routes read bodies through `jsonBody`, which answers 400 itself). It is the
 * caller's mistake, so it answers as Parley's routes do: 400 `invalid_request`, not logged
 * (docs/errors.md). A `SyntaxError` while no body was read is a bug and stays a 500.
 */
function malformedRequestJson(error: unknown, c: Context): HttpError | undefined {
  // Hono caches what `c.req.json()` read (as `text` in Hono 4.12, as `json` before): a body was read.
  const bodyRead = c.req.bodyCache.text !== undefined || c.req.bodyCache.json !== undefined;
  if (!(error instanceof SyntaxError) || !bodyRead) return undefined;
  return {
    status: STATUS_BY_CODE.invalid_request,
    code: ErrorCode.invalidRequest,
    message: 'Malformed JSON in the request body.',
    expected: true,
  };
}

/**
 * Maps any thrown error to a response: `ParleyError.code` → status through {@link STATUS_BY_CODE},
 * Hono `HTTPException`s by status, anything else to 500 `internal_error` with no stack or
 * internals in the body. Unexpected errors are logged with the request id.
 */
export function errorHandler(options: ErrorHandlerOptions): ErrorHandler<ParleyEnv> {
  const shape = options.shape ?? 'api';
  return function errorHandler(error, c) {
    const httpError = malformedRequestJson(error, c) ?? toHttpError(error);
    if (!httpError.expected) {
      const level = httpError.status === 503 ? 'warn' : 'error';
      options.logger[level](
        { err: error, requestId: c.get('requestId'), method: c.req.method, path: c.req.path },
        'request failed',
      );
    }
    addRequiredHeaders(c, httpError);
    const response = render(c, httpError, shape);
    // Nothing was answered yet, so a response on the context is Hono's placeholder, made when
    // `c.res` was read to carry header fields (CORS, the rate limit's before its 429), and
    // `c.body()` in render() has copied its fields already. Dropped now, Hono does not copy them
    // again when it takes this response, which rebuilt it as a full WHATWG Response with a stream
    // body: on every such error, CPU and garbage in the old generation.
    if (!c.finalized) c.res = undefined;
    return response;
  };
}

let fallbackLogger: Logger | undefined;

/**
 * `error` as Parley renders it, for a host's own route that calls core: a `ParleyError`
 * `not_found` answers `404 {"error": {"code": "not_found", …}}` rather than Hono's bare 500, a
 * malformed JSON body read with `c.req.json()` answers `400 invalid_request`, and
 * anything unexpected answers a generic `500 internal_error` (logged with its cause, never echoed).
 * Use it in a `catch`, or for all of a host's routes: `host.onError((error, c) => toErrorResponse(error, c))`.
 * @param options.logger where unexpected errors are logged; default a pino logger on stdout at `warn`.
 * @param options.shape `api` (default) or `sandbox` (`{"error": <status>, "message"}`).
 */
export function toErrorResponse(error: unknown, c: Context, options: Partial<ErrorHandlerOptions> = {}): Response {
  const logger = options.logger ?? (fallbackLogger ??= createLogger('warn'));
  // `errorHandler` only reads the error through `toHttpError`, which accepts anything thrown.
  return errorHandler({ logger, shape: options.shape ?? 'api' })(error as Error, c as Context<ParleyEnv>) as Response;
}

/** Answers 404 `not_found` for a path no route matches, in the given shape. */
export function notFoundHandler(shape: ErrorShape = 'api') {
  return function notFound(c: Context<ParleyEnv>): Response {
    const error: HttpError = {
      status: STATUS_BY_CODE.not_found,
      code: ErrorCode.notFound,
      message: `No route for ${c.req.method} ${c.req.path}.`,
      expected: true,
    };
    return render(c, error, shape);
  };
}
