/** @module 405 and 404 answers for requests no route of an app handles. */
import { ErrorCode, ParleyError } from '@parley/core';
import type { Env, Hono } from 'hono';
import { setHeader } from '../response.js';

/**
 * Appends to `app`, after its last route, a handler for every path it serves that answers the
 * other methods with 405 `method_not_allowed` and an `Allow` header (RFC 9110 §15.5.6). It
 * throws a `ParleyError`, so the app's own error handler renders it in its shape.
 *
 * Why not `hono/method-not-allowed`: it acts at the top-level app, so it is lost when a host
 * mounts this app with `host.route()`. Handlers registered here travel with the app, and they
 * run after any middleware registered before them (authentication, rate limiting), which gives
 * docs/errors.md's order 401 → 429 → route 404/405 → 403 → ….
 *
 * Call it once, after every route of `app` is registered.
 */
export function answerWrongMethods<E extends Env>(app: Hono<E>): Hono<E> {
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
      setHeader(c, 'Allow', allow);
      throw new ParleyError(
        ErrorCode.methodNotAllowed,
        `Method ${c.req.method} is not allowed here. Allowed: ${allow}.`,
      );
    });
  }
  return app;
}

/**
 * {@link answerWrongMethods}, then a catch-all answering 404 `not_found`, also thrown for the
 * app's error handler to render. Only for apps with a path prefix of their own (`/api`,
 * `/sandbox`): at the root of a host, the catch-all would answer for the host's routes too.
 * Hono's `notFound()` is no substitute, for the same reason as above.
 */
export function answerUnmatched<E extends Env>(app: Hono<E>): Hono<E> {
  answerWrongMethods(app);
  app.all('*', function notFound(c) {
    throw new ParleyError(ErrorCode.notFound, `No route for ${c.req.method} ${c.req.path}.`);
  });
  return app;
}
