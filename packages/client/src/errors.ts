/** @module `ParleyApiError`: an answer that is not 2xx, with Parley's error code, details and request id. */
import type { components } from './generated/openapi.js';

/** The body of every `/api` error (decisions §3). */
export type ApiErrorBody = components['schemas']['ApiError'];
/** One of Parley's error codes (`not_found`, `validation_failed`, …). */
export type ErrorCode = ApiErrorBody['error']['code'];
/** `details` of an error: `issues` for `validation_failed`, `requiredScope` for `forbidden`, … */
export type ErrorDetails = NonNullable<ApiErrorBody['error']['details']>;

function isApiErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = (body as { error: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string';
}

function messageOf(body: unknown, status: number): string {
  if (isApiErrorBody(body)) return body.error.message;
  // The sandbox's flat errors: `{"error": <status>, "message": "..."}`.
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return `HTTP ${status}`;
}

/**
 * Thrown by every method of the client when Parley answers with a status that is not 2xx.
 * Network failures are not wrapped: `fetch`'s own error reaches the caller.
 */
export class ParleyApiError extends Error {
  override readonly name = 'ParleyApiError';
  /** The HTTP status. */
  readonly status: number;
  /**
   * Parley's error code, or `http_error` for an answer not in Parley's error shape (the plants
   * sandbox's flat errors, or a proxy's 502 page).
   */
  readonly code: ErrorCode | 'http_error';
  /** `details` of the error, e.g. `issues: [{path, message}]` for `validation_failed`. */
  readonly details: ErrorDetails | undefined;
  /** `X-Request-Id` of the answer: it finds the request in the server's logs. */
  readonly requestId: string | undefined;
  /** `Retry-After` in seconds, when the answer has one (429). */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed body (or its text when it was not JSON). */
  readonly body: unknown;

  /** Reads what Parley said from an answer and its body (already parsed by openapi-fetch). */
  constructor(response: Response, body: unknown) {
    super(messageOf(body, response.status));
    this.status = response.status;
    this.code = isApiErrorBody(body) ? body.error.code : 'http_error';
    this.details = isApiErrorBody(body) ? body.error.details : undefined;
    this.requestId = response.headers.get('X-Request-Id') ?? undefined;
    const retryAfter = Number(response.headers.get('Retry-After') ?? Number.NaN);
    this.retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
    this.body = body;
  }
}

/** True when `error` is a {@link ParleyApiError}, optionally with the given code. */
export function isParleyApiError(error: unknown, code?: ErrorCode | 'http_error'): error is ParleyApiError {
  return error instanceof ParleyApiError && (code === undefined || error.code === code);
}
