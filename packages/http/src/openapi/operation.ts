/**
 * @module `describeOperation`: a route's OpenAPI operation, written beside its handler and built
 * from core's valibot schemas. It documents only; core still validates.
 */
import type { Scope } from '@parley/core';
import type { MiddlewareHandler } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { OpenAPIV3_1 } from 'openapi-types';
import * as v from 'valibot';
import type { ParleyEnv } from '../env.js';
import type { ErrorShape } from '../middleware/error-handler.js';
import { requireScope } from '../middleware/require-scope.js';
import { errorResponse, responseHeaders, type ErrorStatus } from './responses.js';
import { parametersOf, schemaObject } from './json-schema.js';

/** Tags group operations on the reference page, in this order. */
export const TAGS = [
  { name: 'Agents', description: 'AI agents of the workspace.' },
  { name: 'Conversations', description: 'Conversations with an agent.' },
  { name: 'Messages', description: 'Messages of a conversation and its history, cursor-paged.' },
  { name: 'Webhooks', description: 'Webhook endpoints that receive events, their deliveries log and the operator actions on deliveries.' },
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
}

/** A route's documentation. */
export interface OperationDoc {
  /** Stable name used by generated clients, e.g. `createAgent`. */
  operationId: string;
  summary: string;
  description?: string;
  tag: (typeof TAGS)[number]['name'];
  /** The scope the route requires (decisions §6); absent for routes without authentication. */
  scope?: Scope;
  /** Error body shape; default `api`. */
  shape?: ErrorShape;
  /** Path fields as a valibot object; each field becomes a required path parameter. */
  path?: v.GenericSchema;
  query?: v.GenericSchema;
  body?: v.GenericSchema;
  success: SuccessDoc;
  /**
   * Errors particular to this route, with what they mean here. Authentication, scope, rate-limit,
   * 500 and 503 answers are added to authenticated routes, and body or query errors (400, 413, 415)
   * to routes that take one.
   */
  errors?: Partial<Record<ErrorStatus, string | undefined>>;
}

/**
 * The `{id}` path of an `/api` resource. Ids are opaque and not validated (an unknown one is
 * simply 404), so this schema only documents what they look like. Call it once per module:
 * conversions are cached by schema.
 */
export function idPath(resource: string, prefix: string) {
  return v.object({ id: v.pipe(v.string(), v.description(`The ${resource}'s id (${prefix}…).`)) });
}

/** The statuses every route of `doc`'s kind can answer besides its own `errors`. */
function implicitErrors(doc: OperationDoc): ErrorStatus[] {
  if (!doc.scope) return [];
  const statuses: ErrorStatus[] = [401, 403, 429, 500, 503];
  if (doc.body || doc.query) statuses.push(400);
  if (doc.body) statuses.push(413, 415);
  return statuses;
}

function successResponse(success: SuccessDoc, authenticated: boolean): OpenAPIV3_1.ResponseObject {
  const content = success.content ?? (success.schema ? { 'application/json': { schema: schemaObject(success.schema) } } : undefined);
  return { description: success.description, headers: responseHeaders(success.status, authenticated), ...(content ? { content } : {}) };
}

/** The OpenAPI operation object of `doc`. */
function operationObject(doc: OperationDoc): OpenAPIV3_1.OperationObject {
  const shape = doc.shape ?? 'api';
  const authenticated = doc.scope !== undefined;
  const responses: OpenAPIV3_1.ResponsesObject = { [doc.success.status]: successResponse(doc.success, authenticated) };
  const statuses = new Set<ErrorStatus>([...implicitErrors(doc), ...(Object.keys(doc.errors ?? {}).map(Number) as ErrorStatus[])]);
  for (const status of [...statuses].sort((a, b) => a - b)) responses[status] = errorResponse(status, shape, authenticated, doc.errors?.[status]);
  const parameters = [...(doc.path ? parametersOf(doc.path, 'path') : []), ...(doc.query ? parametersOf(doc.query, 'query') : [])];
  const scopeNote = doc.scope ? `Requires the scope \`${doc.scope}\` (or \`*\`).` : 'No API key needed.';
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: [doc.description, scopeNote].filter(Boolean).join('\n\n'),
    tags: [doc.tag],
    // The document requires the bearer key by default; open routes say so explicitly.
    security: authenticated ? [{ bearerAuth: [] }] : [],
    ...(parameters.length ? { parameters } : {}),
    ...(doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaObject(doc.body) } } } } : {}),
    responses,
  };
}

/**
 * The route's middleware carrying `doc` for hono-openapi, which finds it when it walks the app's
 * routes: put it right after the route's path, so the documentation sits with the handler. With
 * `doc.scope` it is also the route's scope check (403 `forbidden`, decisions §6), so the scope the
 * document states is the scope enforced; without one it passes requests through.
 */
export function describeOperation(doc: OperationDoc): MiddlewareHandler<ParleyEnv> {
  const described = describeRoute(operationObject(doc) as Parameters<typeof describeRoute>[0]);
  // hono-openapi reads the spec from a symbol-keyed property, which Object.assign copies.
  return doc.scope === undefined ? described : Object.assign(requireScope(doc.scope), described);
}
