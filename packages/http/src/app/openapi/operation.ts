/**
 * @module `documentAndRequireScope`: a route's OpenAPI operation, written beside its handler and
 * built from core's valibot schemas, and the check of the scope it states. Core still validates.
 */
import type { Scope } from '@parley/core';
import type { MiddlewareHandler } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { OpenAPIV3_1 } from 'openapi-types';
import * as v from 'valibot';
import type { ParleyEnv } from '../env.js';
import type { ErrorShape } from '../middleware/error-handler.js';
import { requireScope } from '../middleware/require-scope.js';
import { errorResponse, headerRef, responseHeaders, type ErrorStatus } from './responses.js';
import { parametersOf, schemaObject } from './json-schema.js';

/** Tags group operations on the reference page, in this order. */
export const TAGS = [
  { name: 'Agents', description: 'AI agents of the workspace.' },
  { name: 'Conversations', description: 'Conversations with an agent.' },
  { name: 'Messages', description: 'Messages of a conversation and its history, cursor-paged.' },
  {
    name: 'Webhooks',
    description: 'Webhook endpoints that receive events, their deliveries log and the operator actions on deliveries.',
  },
  { name: 'Events', description: 'The event log of the workspace: every change, in the order it was recorded.' },
  { name: 'Plants sandbox', description: 'The plants sample of plants-openapi.json, with its own flat errors.' },
  { name: 'Operations', description: 'Probes, this document and the reference page; no API key needed.' },
] as const;

/** What a route answers when it succeeds. */
export interface SuccessDoc {
  status: 200 | 201 | 202 | 204;
  description: string;
  /** A JSON body (valibot); absent for 204 and for `content`. */
  schema?: v.GenericSchema;
  /** A body that is not described by a valibot schema (the HTML page, the document itself). */
  content?: Record<string, OpenAPIV3_1.MediaTypeObject>;
  /** The response carries the resource's `ETag` (README "Optimistic concurrency"). */
  etag?: boolean;
}

/** A route's documentation. */
export interface OperationDoc {
  /** Stable name used by generated clients, e.g. `createAgent`. */
  operationId: string;
  summary: string;
  description?: string;
  tag: (typeof TAGS)[number]['name'];
  /** The scope the route requires (docs/authentication.md); absent for routes without authentication. */
  scope?: Scope;
  /** Any valid API key may call the route, whatever its scopes (`GET /api/key`); ignored with `scope`. */
  anyKey?: boolean;
  /** Error body shape; default `api`. */
  shape?: ErrorShape;
  /** Path fields as a valibot object; each field becomes a required path parameter. */
  path?: v.GenericSchema;
  query?: v.GenericSchema;
  body?: v.GenericSchema;
  success: SuccessDoc;
  /** Other successful answers without a body, with what they mean here (a 204 beside a 200 stream). */
  otherSuccesses?: Partial<Record<SuccessDoc['status'], string>>;
  /**
   * Errors particular to this route, with what they mean here. Authentication, scope, rate-limit,
   * 500 and 503 answers are added to authenticated routes, and body or query errors (400, 413, 415)
   * to routes that take one.
   */
  errors?: Partial<Record<ErrorStatus, string | undefined>>;
  /** The route takes `If-Match` (412 `precondition_failed` on a mismatch). */
  ifMatch?: boolean;
}

/**
 * The `{id}` path of an `/api` resource. Ids are opaque and not validated (an unknown one is
 * simply 404) beyond holding no U+0000 (400, docs/errors.md#strings), so this schema only
 * documents what they look like. Call it once per module: conversions are cached by schema.
 */
export function idPath(resource: string, prefix: string) {
  return v.object({ id: v.pipe(v.string(), v.description(`The ${resource}'s id (${prefix}…).`)) });
}

/** The statuses every route of `doc`'s kind can answer besides its own `errors`. */
function implicitErrors(doc: OperationDoc): ErrorStatus[] {
  if (!doc.scope && !doc.anyKey) return [];
  const statuses: ErrorStatus[] = doc.scope ? [401, 403, 429, 500, 503] : [401, 429, 500, 503];
  // A path id holding U+0000 is a 400 too (routes/endpoint.ts).
  if (doc.body || doc.query || doc.path) statuses.push(400);
  if (doc.body) statuses.push(413, 415);
  return statuses;
}

function successResponse(success: SuccessDoc, authenticated: boolean): OpenAPIV3_1.ResponseObject {
  const content =
    success.content ?? (success.schema ? { 'application/json': { schema: schemaObject(success.schema) } } : undefined);
  return {
    description: success.description,
    headers: responseHeaders(success.status, authenticated),
    ...(content ? { content } : {}),
  };
}

/** The `Idempotency-Key` request header of `/api` creates (README "Idempotent requests"). */
const IDEMPOTENCY_KEY_PARAMETER: OpenAPIV3_1.ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: a repeat with the same key, method, path and body within 24 h gets the first response again (`Idempotent-Replayed: true`) and changes nothing. 5xx answers are not kept.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
};

/** The `If-Match` request header of conditional writes (README "Optimistic concurrency"). */
const IF_MATCH_PARAMETER: OpenAPIV3_1.ParameterObject = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    "Writes only if the resource's current `ETag` is one of these entity tags (RFC 9110 §13.1.1), checked atomically with the write; `*` matches any existing resource. Otherwise 412 `precondition_failed` and nothing changes.",
  schema: { type: 'string' },
};

/** The `If-None-Match` request header of reads that answer an `ETag` (RFC 9110 §13.1.2). */
const IF_NONE_MATCH_PARAMETER: OpenAPIV3_1.ParameterObject = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    "When one of these entity tags (weak comparison) or `*` matches the resource's current `ETag`, the answer is `304 Not Modified` without a body.",
  schema: { type: 'string' },
};

const IDEMPOTENCY_409 = '`idempotency_key_in_use`: a request with this `Idempotency-Key` is still being processed.';

/**
 * Creates under `/api` (the API's `POST`s: a body and `201`) take `Idempotency-Key`: its header,
 * the replay header on the success, and 409 / 422 among the errors.
 */
function isIdempotentCreate(doc: OperationDoc): boolean {
  return (doc.shape ?? 'api') === 'api' && doc.body !== undefined && doc.success.status === 201;
}

/** The OpenAPI operation object of `doc`. */
function operationObject(doc: OperationDoc): OpenAPIV3_1.OperationObject {
  const shape = doc.shape ?? 'api';
  const authenticated = doc.scope !== undefined || doc.anyKey === true;
  const idempotent = isIdempotentCreate(doc);
  const success = successResponse(doc.success, authenticated);
  if (idempotent) success.headers = { ...success.headers, 'Idempotent-Replayed': headerRef('Idempotent-Replayed') };
  if (doc.success.etag) success.headers = { ...success.headers, ETag: headerRef('ETag') };
  const responses: OpenAPIV3_1.ResponsesObject = { [doc.success.status]: success };
  for (const [status, description] of Object.entries(doc.otherSuccesses ?? {}))
    responses[status] = {
      description,
      headers: responseHeaders(Number(status) as SuccessDoc['status'], authenticated),
    };
  // A read (no body, no If-Match) that answers an ETag honours If-None-Match with 304.
  const revalidates = doc.success.etag === true && doc.body === undefined && !doc.ifMatch;
  if (revalidates)
    responses[304] = {
      description: 'Not Modified: `If-None-Match` matches the current `ETag`; no body.',
      headers: { ...responseHeaders(304, authenticated), ETag: headerRef('ETag') },
    };
  const errors: Partial<Record<ErrorStatus, string | undefined>> = { ...doc.errors };
  if (idempotent) {
    errors[409] = errors[409] ? `${errors[409]} Or ${IDEMPOTENCY_409}` : IDEMPOTENCY_409;
    errors[422] ??= undefined;
  }
  if (doc.ifMatch) errors[412] ??= undefined;
  const statuses = new Set<ErrorStatus>([
    ...implicitErrors(doc),
    ...(Object.keys(errors).map(Number) as ErrorStatus[]),
  ]);
  for (const status of [...statuses].sort((a, b) => a - b))
    responses[status] = errorResponse(status, shape, authenticated, errors[status]);
  const parameters = [
    ...(doc.path ? parametersOf(doc.path, 'path') : []),
    ...(doc.query ? parametersOf(doc.query, 'query') : []),
    ...(idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : []),
    ...(doc.ifMatch ? [IF_MATCH_PARAMETER] : []),
    ...(revalidates ? [IF_NONE_MATCH_PARAMETER] : []),
  ];
  const scopeNote = doc.scope
    ? `Requires the scope \`${doc.scope}\` (or \`*\`).`
    : doc.anyKey
      ? 'Any valid API key, whatever its scopes.'
      : 'No API key needed.';
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: [doc.description, scopeNote].filter(Boolean).join('\n\n'),
    tags: [doc.tag],
    // The document requires the bearer key by default; open routes say so explicitly.
    security: authenticated ? [{ bearerAuth: [] }] : [],
    ...(parameters.length ? { parameters } : {}),
    ...(doc.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: schemaObject(doc.body) } } } }
      : {}),
    responses,
  };
}

/**
 * The route's middleware carrying `doc` for hono-openapi, which finds it when it walks the app's
 * routes: put it right after the route's path, so the documentation sits with the handler. With
 * `doc.scope` it is also the route's scope check (403 `forbidden`, docs/authentication.md), so the scope the
 * document states is the scope enforced; without one it passes requests through.
 */
export function documentAndRequireScope(doc: OperationDoc): MiddlewareHandler<ParleyEnv> {
  return documented(doc, doc.scope === undefined ? async (_c, next) => next() : requireScope(doc.scope));
}

/** `handler` (the same function) carrying `doc` for the OpenAPI document. */
export function documented<H extends Function>(doc: OperationDoc, handler: H): H {
  const described = describeRoute(operationObject(doc) as Parameters<typeof describeRoute>[0]);
  // hono-openapi reads the spec from a symbol-keyed property, which Object.assign copies.
  return Object.assign(handler, described);
}
