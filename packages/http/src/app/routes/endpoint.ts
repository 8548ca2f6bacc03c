/**
 * @module `endpoint`: one `/api` route's documentation, scope check, body reading and handler as
 * one Hono handler, with the handler given its workspace, path parameters and input typed from
 * the schemas it documents.
 */
import { assertStorableStrings, type WorkspaceScope } from '@parley/core';
import type { Context, MiddlewareHandler } from 'hono';
import type * as v from 'valibot';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { checkScope } from '../middleware/require-scope.js';
import { documentAndRequireScope, documented, type OperationDoc } from '../openapi/operation.js';

/** The input type of `schema`, or `undefined` when the route documents none. */
type InputOf<Schema> = Schema extends v.GenericSchema ? v.InferInput<Schema> : undefined;

/**
 * What a handler receives. `body` and `query` are what the caller sent, typed as the schemas'
 * input: core validates them (once, with the same schemas) and throws `validation_failed`.
 */
export interface EndpointInput<Doc extends OperationDoc> {
  /**
   * The authenticated key's workspace, and the request's rate-limit decision when it is left to the
   * core (middleware/rate-limit.ts): passed first to every core call, which confines every read and
   * write to the workspace and makes nothing happen before the request is admitted.
   */
  scope: WorkspaceScope;
  /** The path parameters the route documents, e.g. `{ id }`. */
  params: Doc['path'] extends v.GenericSchema ? v.InferOutput<Doc['path']> : Record<string, never>;
  body: InputOf<Doc['body']>;
  query: InputOf<Doc['query']>;
}

/** A route handler over {@link EndpointInput}. */
export type EndpointHandler<Doc extends OperationDoc> = (
  input: EndpointInput<Doc>,
  c: Context<ParleyEnv>,
) => Response | Promise<Response>;

/** The body reader the `/api` routes share (JSON, size limit, `Idempotency-Key`). */
export type BodyReader = MiddlewareHandler<ParleyEnv, string, JsonBodyInput>;

/** The handlers of one route: documentation and scope check, the body reader, the handler; one handler doing all three when it takes no body. */
export type EndpointHandlers<Doc extends OperationDoc> = Doc['body'] extends v.GenericSchema
  ? [MiddlewareHandler<ParleyEnv>, MiddlewareHandler<ParleyEnv>, MiddlewareHandler<ParleyEnv>]
  : [MiddlewareHandler<ParleyEnv>];

/**
 * A maker of `/api` routes over `body`: `endpoint(doc, handler)` is the handler list of a route
 * (`.post('/', ...endpoint({ … }, ({ scope, body }) => …))`): its documentation and scope
 * check (403), the body reader when `doc.body` is given (413, 415, 400), then `handler`. With a
 * body they stay separate handlers, so an error `handler` throws is rendered by the app before the
 * body reader's `Idempotency-Key` step sees the response; without one they are a single handler.
 * @throws TypeError (when a route is defined) for a `doc.body` without a body reader.
 */
export function endpoints(body?: BodyReader) {
  return function endpoint<const Doc extends OperationDoc>(
    doc: Doc,
    handler: EndpointHandler<Doc>,
  ): EndpointHandlers<Doc> {
    if (doc.body && !body)
      throw new TypeError(`endpoint ${doc.operationId}: a body is documented but no body reader was given.`);
    // Not async: Hono awaits what a handler returns and catches what it throws, so an async frame
    // here would only add a promise per request.
    const handle = (c: Context<ParleyEnv>): Response | Promise<Response> => {
      const params = c.req.param();
      // Core checks the body and query it parses; ids it takes as given, so they are checked here
      // (docs/errors.md#strings): `/api/agents/%00` is 400 at `id`, never a 5xx from storage.
      assertStorableStrings(params);
      const input = {
        // Set by the rate-limit middleware; a guard without it scopes to the key's workspace alone.
        scope: c.get('scope') ?? { workspaceId: c.get('principal').workspaceId },
        params,
        // The body reader parked the parsed JSON; the query is the URL's. Both are checked by core.
        body: doc.body ? (c.req.valid as (target: 'json') => unknown)('json') : undefined,
        query: doc.query ? c.req.query() : undefined,
      } as EndpointInput<Doc>;
      return handler(input, c);
    };
    // Without a body, the scope check and the handler are one handler: one step less per request.
    const first =
      doc.body && body
        ? documentAndRequireScope(doc)
        : documented(doc, function endpoint(c: Context<ParleyEnv>) {
            if (doc.scope !== undefined) checkScope(c, doc.scope);
            return handle(c);
          });
    return (doc.body && body ? [first, body, handle] : [first]) as EndpointHandlers<Doc>;
  };
}
