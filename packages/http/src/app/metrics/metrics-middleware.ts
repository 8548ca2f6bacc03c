/** @module Counts and times every request for {@link ParleyMetrics}, by route template. */
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { ParleyEnv } from '../env.js';
import type { ParleyMetrics } from './metrics.js';

/**
 * Records each request once its response is decided (errors included: the app's `onError` has
 * rendered them by then). `route` is the template of the deepest route or middleware that
 * matched (`/api/agents/:id`, or `/api/*` for a request refused before routing), never the raw
 * path, so ids do not blow up the number of series.
 */
export function requestMetrics(metrics: ParleyMetrics): MiddlewareHandler<ParleyEnv> {
  return async function requestMetrics(c, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routePath(c) || 'unmatched';
      const method = c.req.method;
      const status = c.res.status;
      metrics.httpRequests.inc({ method, route, status: String(status) });
      metrics.httpDuration.observe({ method, route }, (performance.now() - started) / 1000);
      if (status === 429 && c.var.principal) metrics.rateLimitRefusals.inc({ plan: c.var.principal.plan });
    }
  };
}
