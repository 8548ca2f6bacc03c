/**
 * @module The HTTP server span of each request (OpenTelemetry HTTP semantic conventions), named by
 * its route template, and the request's trace context for everything it calls (docs/observability.md#traces).
 */
import {
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { ParleyEnv } from '../env.js';

/** Reads propagation fields (`traceparent`, `tracestate`, `baggage`) from a request's headers. */
const HEADERS: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * Starts a SERVER span per request, the child of the span active when the app is called (a host
 * app's own request span), else of the caller's trace context (the propagator the host's SDK
 * registered: W3C `traceparent` by default), and runs the rest of the pipeline with it
 * active — so the services' storage writes record it with their events, and the worker that takes
 * them continues the trace. The span is named `{method} {route}` with `http.route` the route
 * template (`/api/conversations/:id/messages`, or `/api/*` for a request refused before routing),
 * never the raw path with its ids; attributes: `http.request.method`, `http.route`,
 * `http.response.status_code`, `url.scheme`. No header value, query or body is recorded. A 5xx is
 * an `ERROR` with `error.type` the status code.
 *
 * With the OpenTelemetry API's no-op tracer (no SDK) and no incoming trace context, it only calls
 * the next handler.
 */
export function requestTracing(tracer: Tracer): MiddlewareHandler<ParleyEnv> {
  return async function requestTracing(c, next) {
    // Mounted under a host that traces its requests already: its span is the parent.
    const active = context.active();
    const parent = trace.getSpan(active) ? active : propagation.extract(active, c.req.raw.headers, HEADERS);
    const method = c.req.method;
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
    // Nothing to record and no trace to pass on: tracing is off.
    if (!span.isRecording() && !isSpanContextValid(span.spanContext())) return next();
    span.setAttribute('http.request.method', method);
    span.setAttribute('url.scheme', c.req.url.startsWith('https:') ? 'https' : 'http');
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = routePath(c) || 'unmatched';
      const status = c.res.status;
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}
