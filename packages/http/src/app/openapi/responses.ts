/**
 * @module The document's response headers and error responses (docs/errors.md, docs/rate-limits.md, docs/sandbox.md): which
 * statuses an operation can answer, in which shape, with which header fields.
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { BEARER_CHALLENGE } from '../middleware/bearer-auth.js';
import type { ErrorShape } from '../middleware/error-handler.js';

type HeaderRef = OpenAPIV3_1.ReferenceObject;

/** `components.headers`: fields Parley sets on responses. */
export const HEADERS: Record<string, OpenAPIV3_1.HeaderObject> = {
  'X-Request-Id': {
    description: 'Identifies the request in the logs. A sane incoming X-Request-Id is kept.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'The plan\'s quota (IETF RateLimit header fields): `"<plan>";q=<requests>;w=<window in seconds>`.',
    required: true,
    schema: { type: 'string' },
    example: '"pro";q=1000;w=3600',
  },
  RateLimit: {
    description: 'What is left of the quota: `"<plan>";r=<remaining>;t=<seconds until it is full again>`.',
    required: true,
    schema: { type: 'string' },
    example: '"pro";r=998;t=8',
  },
  'Retry-After': {
    description: 'Seconds until one more request is admitted (RFC 9110), rounded up.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  ETag: {
    description:
      'The strong entity tag of the resource returned (RFC 9110 §8.8.3): send it back in `If-Match` to change it only if nobody else did.',
    required: true,
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` on a response replayed for a repeated `Idempotency-Key`: the request did not run again.',
    schema: { type: 'string', enum: ['true'] },
  },
  'WWW-Authenticate': {
    description:
      'The Bearer challenge (RFC 6750), with `error="invalid_request"` or `error="invalid_token"` when a key was sent.',
    required: true,
    schema: { type: 'string' },
    example: BEARER_CHALLENGE,
  },
};

const header = (name: keyof typeof HEADERS & string): HeaderRef => ({ $ref: `#/components/headers/${name}` });

/** The statuses an error response may have (docs/errors.md). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 412 | 413 | 415 | 422 | 429 | 500 | 503;

/** What each status means, naming the codes docs/errors.md gives it. */
const ERROR_DESCRIPTIONS: Readonly<Record<ErrorStatus, string>> = {
  400: '`invalid_request` (malformed JSON) or `validation_failed` (`details.issues: [{path, message}]`, never echoing input).',
  401: '`unauthorized`: missing, malformed or unknown API key. Not counted against the rate limit.',
  403: '`forbidden`: the key lacks the scope of this operation (`details.requiredScope`).',
  404: "`not_found`: no such resource in the key's workspace.",
  409: '`conflict`: the request conflicts with the current state.',
  412: "`precondition_failed`: `If-Match` does not match the resource's current entity tag (`details.etag`); nothing was changed.",
  413: '`payload_too_large`: the body is over the configured limit (`details.limitBytes`).',
  415: '`unsupported_media_type`: a non-empty body that is not `application/json` (charset utf-8), or one with a `Content-Encoding`.',
  422: '`idempotency_key_reused`: the `Idempotency-Key` was already used for another method, path or body.',
  429: "`rate_limit_exceeded`: over the plan's limit (`details.retryAfterSeconds`); costs no quota.",
  500: '`internal_error`: something unexpected; the body reveals nothing, the log has the cause.',
  503: '`service_unavailable`: storage (or the rate-limit store, when failing closed) is unreachable.',
};

/** A reference to one of {@link HEADERS}. */
export const headerRef = header;

/** Header fields of a response: `X-Request-Id` always, the RateLimit fields once a key is known. */
export function responseHeaders(status: number, authenticated: boolean): Record<string, HeaderRef> {
  const headers: Record<string, HeaderRef> = { 'X-Request-Id': header('X-Request-Id') };
  if (status === 401) return { ...headers, 'WWW-Authenticate': header('WWW-Authenticate') };
  if (!authenticated) return headers;
  Object.assign(headers, { 'RateLimit-Policy': header('RateLimit-Policy'), RateLimit: header('RateLimit') });
  if (status === 429) headers['Retry-After'] = header('Retry-After');
  return headers;
}

/** The same statuses in the sandbox, whose flat errors carry no code and no details (docs/sandbox.md). */
const SANDBOX_DESCRIPTIONS: Readonly<Record<ErrorStatus, string>> = {
  400: 'Unexpected error: the query, path or body is invalid.',
  401: 'Missing, malformed or unknown API key.',
  403: 'The key lacks the scope of this operation.',
  404: 'Not found.',
  409: 'The request conflicts with the current state.',
  412: 'A precondition failed.',
  413: 'The body is over the configured limit.',
  415: 'A non-empty body that is not `application/json`.',
  422: 'The request is well-formed but cannot be processed.',
  429: "Over the plan's limit.",
  500: 'Something unexpected; the body reveals nothing.',
  503: 'Storage is unreachable.',
};

/** An error response in `shape`; `description` replaces the generic one of the status. */
export function errorResponse(
  status: ErrorStatus,
  shape: ErrorShape,
  authenticated: boolean,
  description?: string,
): OpenAPIV3_1.ResponseObject {
  const [schema, generic] =
    shape === 'api'
      ? ['ApiError', ERROR_DESCRIPTIONS[status]]
      : ['Error', `${SANDBOX_DESCRIPTIONS[status]} Flat: \`{"error": ${status}, "message"}\`.`];
  return {
    description: description ?? generic,
    headers: responseHeaders(status, authenticated),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
}
