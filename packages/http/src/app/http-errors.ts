/** @module The one table from Parley error codes to HTTP statuses, and error normalisation. */
import { ErrorCode, isParleyError } from '@parley/core';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * HTTP status of every {@link ErrorCode} (docs/errors.md). Typed as a total record so a code added
 * to core without a status here fails the build.
 */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, ContentfulStatusCode>> = Object.freeze({
  invalid_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_in_use: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_timeout: 408,
  idempotency_key_reused: 422,
  rate_limit_exceeded: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
});

/** An error reduced to what may be shown to a caller. */
export interface HttpError {
  status: ContentfulStatusCode;
  code: ErrorCode;
  /** Safe to show: never a stack, never internals. */
  message: string;
  details?: Record<string, unknown>;
  /** False for failures the caller did not cause (500, 503): these are logged with the cause. */
  expected: boolean;
}

const GENERIC_MESSAGE: Readonly<Record<ErrorCode, string>> = Object.freeze({
  invalid_request: 'The request cannot be read.',
  validation_failed: 'Validation failed.',
  unauthorized: 'A valid API key is required.',
  forbidden: 'This API key may not do that.',
  not_found: 'Not found.',
  method_not_allowed: 'Method not allowed.',
  conflict: 'The request conflicts with the current state.',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still being processed.',
  precondition_failed: 'The resource does not match If-Match.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'The request body must be application/json.',
  request_timeout: 'The request was not received in time.',
  idempotency_key_reused: 'This Idempotency-Key was used for a different request.',
  rate_limit_exceeded: 'Rate limit exceeded.',
  request_header_fields_too_large: 'The request header fields are too large.',
  internal_error: 'Internal server error.',
  service_unavailable: 'The service is temporarily unavailable.',
});

/** The first code whose status is `status` (so 400 → `invalid_request`), else `internal_error`. */
function codeForStatus(status: number): ErrorCode {
  const entry = Object.entries(STATUS_BY_CODE).find(([, candidate]) => candidate === status);
  return (entry?.[0] as ErrorCode | undefined) ?? ErrorCode.internalError;
}

/**
 * Normalises anything thrown while handling a request. A `ParleyError` keeps its code, message
 * and details; a Hono `HTTPException` (thrown by third-party middleware) keeps only its status,
 * with a generic message; everything else is an `internal_error` whose message reveals nothing.
 */
export function toHttpError(error: unknown): HttpError {
  if (isParleyError(error)) {
    const status = STATUS_BY_CODE[error.code];
    // A core `internal_error` may carry a message written for operators, not callers.
    const message = error.code === ErrorCode.internalError ? GENERIC_MESSAGE.internal_error : error.message;
    const expected = status < 500;
    return {
      status,
      code: error.code,
      message,
      ...(error.details && expected ? { details: error.details } : {}),
      expected,
    };
  }
  if (error instanceof HTTPException) {
    const code = codeForStatus(error.status);
    return { status: STATUS_BY_CODE[code], code, message: GENERIC_MESSAGE[code], expected: STATUS_BY_CODE[code] < 500 };
  }
  return { status: 500, code: ErrorCode.internalError, message: GENERIC_MESSAGE.internal_error, expected: false };
}
