/** @module The Hono environment every Parley route and middleware shares. */
import type { Principal, WorkspaceScope } from '@parley/core';

/**
 * Context variables: `principal` is set by the auth middleware for every authenticated request
 * (absent before it runs); `requestId` by the request-context middleware; `scope` by the rate-limit
 * middleware: the workspace, and the rate-limit decision when it is left to the core (middleware/rate-limit.ts).
 */
export interface ParleyEnv {
  Variables: {
    principal: Principal;
    requestId: string;
    scope?: WorkspaceScope;
    /** The response's header fields, lower-case (response.ts); started by the request-context middleware. */
    responseHeaders?: ResponseHeaderFields;
  };
}

/**
 * The header fields of one request's response (response.ts), lower-case names to values, and
 * `built`, the response that already carries all of them: setting a field clears it, so a field
 * set afterwards (say, the rate limit decided after an early error) is still copied onto it.
 */
export interface ResponseHeaderFields {
  readonly fields: Record<string, string>;
  built: Response | undefined;
  /**
   * The last response built from a string (`respond()`, the error handler), with `text`, that
   * string (`null`: no body): compression sizes the response by it, without reading it back.
   */
  textResponse: Response | undefined;
  text: string | null;
}
