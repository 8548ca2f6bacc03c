/** @module 405 and 404 answers for requests no route of an app handles. */
import { ErrorCode, ParleyError } from '@parley/core';
import type { Env, Hono } from 'hono';

/**
 * Appends to `app`, after its last route: for every path it serves, a handler answering the
 * other methods with 405 `method_not_allowed` and an `Allow` header (RFC 9110 §15.5.6), then a
 * catch-all answering 404 `not_found`. Both throw `ParleyError`s, so the app's own error handler
 * renders them in its shape.
 *
 * Why not Hono's `notFound()` or `hono/method-not-allowed`: both act at the top-level app, so
 * they are lost when a host mounts this app with `host.route()`. Handlers registered here travel
 * with the app, and they run after any middleware registered before them (authentication, rate
 * limiting), which gives decisions §3's order 401 → 429 → route 404/405 → 403 → ….
 *
 * Call it once, after every route of `app` is registered.
 */
export function answerUnmatched<E extends Env>(app: Hono<E>): Hono<E> {
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of app.routes) {
    // `ALL` entries are middleware registered with `use()`, not routes of their own.
    if (route.method === 'ALL') continue;
    const methods = methodsByPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    // Hono answers HEAD with the GET route.
    if (route.method === 'GET') methods.add('HEAD');
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods].sort().join(', ');
    app.all(path, function methodNotAllowed(c) {
      c.header('Allow', allow);
      throw new ParleyError(ErrorCode.methodNotAllowed, `Method ${c.req.method} is not allowed here. Allowed: ${allow}.`);
    });
  }
  app.all('*', function notFound(c) {
    throw new ParleyError(ErrorCode.notFound, `No route for ${c.req.method} ${c.req.path}.`);
  });
  return app;
}
