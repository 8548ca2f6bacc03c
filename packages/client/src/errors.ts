/** @module `ParleyApiError`: an answer that is not 2xx, with Parley's error code, details and request id. */
import type { components } from './generated/openapi.js';

/** The body of every `/api` error (docs/errors.md). */
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
 * When no answer arrives at all, the error is a {@link ParleyNetworkError} instead.
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

/**
 * Thrown by every method of the client (and by `raw` calls) when no HTTP answer arrived: the
 * connection was refused or reset, the host name did not resolve, TLS failed. `fetch` reports
 * all of these as a bare `TypeError: fetch failed`; this says which request failed and why,
 * and keeps that error as `cause`. Aborts (`AbortError`, `TimeoutError`) are not wrapped: the
 * caller asked for them.
 */
export class ParleyNetworkError extends Error {
  override readonly name = 'ParleyNetworkError';
  /** Always `network_error`, so code can switch on `code` across both error classes. */
  readonly code = 'network_error';
  /** The request's method. */
  readonly method: string;
  /** The request's URL. */
  readonly url: string;
  /** The system error code underneath when there is one: `ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`, … */
  readonly causeCode: string | undefined;

  constructor(request: Request, cause: unknown) {
    const causeCode = systemCode(cause);
    const why = innermostMessage(cause);
    super(`Could not reach Parley: ${request.method} ${request.url} failed (${why}).`, { cause });
    this.method = request.method;
    this.url = request.url;
    this.causeCode = causeCode;
  }
}

/** The `code` of `error` or of the first error in its `cause` chain that has one. */
function systemCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The message of the deepest error in `error`'s cause chain: `connect ECONNREFUSED 127.0.0.1:1` rather than `fetch failed`. */
function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current.message) message = current.message;
  }
  return message;
}

/** True when `error` is a {@link ParleyNetworkError}: Parley could not be reached at all. */
export function isParleyNetworkError(error: unknown): error is ParleyNetworkError {
  return error instanceof ParleyNetworkError;
}
