/** @module Per-route scope checks (docs/authentication.md). */
import { ErrorCode, ParleyError, hasScope, type Scope } from '@parley/core';
import type { Context, MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';

/**
 * Lets the request through when the authenticated key holds `scope` (or `*`); otherwise 403
 * `forbidden` with `details.requiredScope`. Attach it to each route, not to a router: a router-wide
 * check would answer 403 before an unknown route's 404 or a wrong method's 405 (docs/errors.md).
 */
export function requireScope(scope: Scope): MiddlewareHandler<ParleyEnv> {
  return async function requireScope(c, next) {
    checkScope(c, scope);
    await next();
  };
}

/**
 * {@link requireScope}'s check as a step of a route's own handler.
 * @throws ParleyError `forbidden` (403, `details.requiredScope`); `unauthorized` without a principal
 */
export function checkScope(c: Context<ParleyEnv>, scope: Scope): void {
  const principal = c.get('principal');
  // Only reachable when a host mounts routes without bearerAuth in front of them.
  if (!principal) throw new ParleyError(ErrorCode.unauthorized, 'A valid API key is required.');
  if (!hasScope(principal, scope)) {
    throw new ParleyError(ErrorCode.forbidden, `This API key lacks the scope ${scope}.`, { requiredScope: scope });
  }
}
