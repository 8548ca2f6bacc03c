/** @module The one error family core throws; transports map `code` to their own status. */

/**
 * Every error code Parley produces (docs/errors.md). Frozen: adapters and hosts compare against
 * these values, and `@parley/http` maps each to exactly one HTTP status.
 */
export const ErrorCode = Object.freeze({
  invalidRequest: 'invalid_request',
  validationFailed: 'validation_failed',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'not_found',
  methodNotAllowed: 'method_not_allowed',
  conflict: 'conflict',
  idempotencyKeyInUse: 'idempotency_key_in_use',
  preconditionFailed: 'precondition_failed',
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  requestTimeout: 'request_timeout',
  idempotencyKeyReused: 'idempotency_key_reused',
  rateLimitExceeded: 'rate_limit_exceeded',
  requestHeaderFieldsTooLarge: 'request_header_fields_too_large',
  internalError: 'internal_error',
  serviceUnavailable: 'service_unavailable',
} as const);

/** One of the string values of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** One failed check of a validation: `path` is dotted (`metadata.tags.0`), empty for the root. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/**
 * The error core throws for every expected failure. `message` is safe to show to API callers;
 * `details` is JSON and never echoes submitted input; `cause` keeps the underlying error for logs.
 */
export class ParleyError extends Error {
  override readonly name = 'ParleyError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** `not_found` for a resource kind and id, e.g. `ParleyError.notFound('agent', 'agt_…')`. */
  static notFound(resource: string, id: string): ParleyError {
    return new ParleyError(ErrorCode.notFound, `No ${resource} with id '${id}'.`);
  }
}

/** True when `error` is a {@link ParleyError}, optionally with the given code. */
export function isParleyError(error: unknown, code?: ErrorCode): error is ParleyError {
  return error instanceof ParleyError && (code === undefined || error.code === code);
}
