/** @module `createApp`: Parley's whole HTTP surface as one embeddable Hono app. */
import { agentSchemas, type Core } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from './env.js';
import { createLogger, type LogLevel, type Logger } from './logger.js';
import { bearerAuthentication } from './middleware/bearer-auth.js';
import { crossOrigin } from './middleware/cross-origin.js';
import { errorHandler, notFoundHandler } from './middleware/error-handler.js';
import { idempotency } from './middleware/idempotency.js';
import { DEFAULT_BODY_LIMIT_BYTES, jsonBody, type JsonBodyInput } from './middleware/json-body.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestContext } from './middleware/request-context.js';
import { requestTracing } from './middleware/request-tracing.js';
import type { Tracer } from '@opentelemetry/api';
import type { ParleyMetrics } from './metrics/metrics.js';
import { requestMetrics } from './metrics/metrics-middleware.js';
import { apiRoutes } from './routes/api.js';
import { healthRoutes } from './routes/health.js';
import { referenceRoutes } from './routes/reference.js';
import type { ReplyRoutesOptions } from './routes/replies.js';
import { createSandboxApp } from '../sandbox/sandbox-app.js';
import { consoleRoutes } from '@parley/console';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Largest request body in bytes; larger ones get 413 `payload_too_large`. Default 1 MiB. */
  bodyLimitBytes?: number;
  /** Level of the JSON request log when no `logger` is given; default `info`. */
  logLevel?: LogLevel;
  /** A pino logger to write request lines and errors to; default a new one on stdout. */
  logger?: Logger;
  /** Serve `GET /openapi.json` and the reference page `GET /docs`, without authentication; default true. */
  docs?: boolean;
  /**
   * Origins whose pages may call the API from a browser: `'*'` or exact origins
   * (`['https://app.example.com']`). Preflights are answered without a key. Default: none, and
   * no CORS headers are sent.
   */
  corsOrigins?: '*' | readonly string[];
  /** Compress JSON responses of 1 KiB or more when the client accepts gzip or deflate; default true. */
  compression?: boolean;
  /**
   * Live streams: `keepAliveMs`, the quiet time before a `:` comment (default 15 000), and
   * `shutdown`, a signal that ends every open stream (the ready-made server aborts it on SIGTERM).
   */
  replies?: ReplyRoutesOptions;
  /**
   * Count and time every request in these metrics (`createMetrics()`); default none. Serve them
   * with `serveMetrics(metrics.registry, …)` from `@parley/http/server`, or your own route.
   */
  metrics?: ParleyMetrics;
  /**
   * Serve the web console (`@parley/console`, docs/console.md) at `/console/` and redirect `GET /`
   * there; default false (the ready-made server turns it on unless `CONSOLE=false`). It calls this
   * app's `/api` with a key the person pastes; its responses carry a strict Content-Security-Policy.
   */
  console?: boolean;
  /**
   * Where each request's HTTP server span goes (docs/observability.md#traces); default the core's
   * tracer (`createCore`'s `tracer`, else the OpenTelemetry API's global one: a no-op without an SDK).
   */
  tracer?: Tracer;
}

/**
 * Parley's HTTP API over `core`:
 * - `/api/...`: agents, conversations, messages and webhook endpoints (docs/api.md#routes, docs/api.md#resources),
 *   bearer-authenticated, errors as `{"error": {"code", "message", "details"?}}`;
 * - `/sandbox/plants`: the plants sample (plants-openapi.json), errors flat;
 * - `/healthz` and `/readyz` without authentication;
 * - `/openapi.json` (OpenAPI 3.1 of all of the above) and `/docs` (a reference page for it), also
 *   without authentication, unless `docs: false`.
 * Every response carries `X-Request-Id` (a sane incoming one is kept) and every request is logged
 * as one JSON line. Mount it in a host with `host.route('/', createApp(core))`; note that its
 * request-id and logging middleware then also cover the host's routes under that path.
 *
 * Request pipeline, whose order gives docs/errors.md's error precedence:
 * request context (id, header fields, JSON compression, log) → CORS (preflights answered
 * here) → [/api, /sandbox] guard: bearer auth (401), then rate limit (429) → route
 * match (404/405) → scope (403) → body size (413) → media type (415) → JSON (400
 * `invalid_request`) → [/api POST with `Idempotency-Key`] replay,
 * 422, 409 → core: schema (400 `validation_failed`), resource (404), state (409).
 */
export function createApp(core: Core, options: AppOptions = {}): Hono<ParleyEnv> {
  const logger = options.logger ?? createLogger(options.logLevel ?? 'info');
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;

  // Every authenticated request, /api and /sandbox alike, passes these in this order, as one
  // middleware: auth, then — a 401 is never counted — the rate limit, before route matching, so
  // 429 precedes 404/405/403/…
  const authenticate = bearerAuthentication({ apiKeys: core.apiKeys });
  // /api routes reach everything through the core with the request's scope, so their rate limit
  // may be left to the core's first storage call (middleware/rate-limit.ts); the sandbox's is decided first.
  const guardWith = (limit: MiddlewareHandler<ParleyEnv>): MiddlewareHandler<ParleyEnv>[] => [
    async function guard(c, next) {
      await authenticate(c);
      // Awaited, not returned: a promise returned from an async function takes two more turns.
      await limit(c, next);
    },
  ];
  const guard = guardWith(rateLimit(core, { leaveToCore: true }));

  const app = new Hono<ParleyEnv>();
  // First, so the span covers the whole pipeline and everything it calls runs in its trace.
  app.use(requestTracing(options.tracer ?? core.tracing.tracer));
  // Then, so the time measured and the status counted are those of the whole pipeline.
  if (options.metrics) app.use(requestMetrics(options.metrics));
  app.use(requestContext({ logger, compression: options.compression ?? true }));
  // Before authentication: browsers send preflights without the Authorization header.
  if (options.corsOrigins !== undefined) app.use(crossOrigin(options.corsOrigins));
  app.route('/', healthRoutes(core));
  app.route(
    '/api',
    apiRoutes(core, {
      guard,
      body: apiBody(core, bodyLimitBytes, logger),
      ...(options.replies && { replies: options.replies }),
    }),
  );
  app.route('/sandbox', createSandboxApp(core, { guard: guardWith(rateLimit(core)), bodyLimitBytes, logger }));
  if (options.docs ?? true) {
    const agents = agentSchemas(core.agentModels);
    app.route('/', referenceRoutes(app, { AgentCreate: agents.create, AgentUpdate: agents.update }));
  }
  if (options.console) {
    app.route('/console', consoleRoutes());
    // From the path asked, so it also works under a host's prefix (`/agents-api` → `/agents-api/console/`).
    app.get('/', (c) => c.redirect(c.req.path.replace(/\/?$/, '/console/'), 302));
  }
  app.notFound(notFoundHandler('api'));
  app.onError(errorHandler({ logger, shape: 'api' }));
  return app;
}

/**
 * The body reader of `/api` routes: `jsonBody`, then `Idempotency-Key` handling, which
 * fingerprints the body it read (see `middleware/idempotency.ts`).
 */
function apiBody(core: Core, maxBytes: number, logger: Logger): MiddlewareHandler<ParleyEnv, string, JsonBodyInput> {
  const read = jsonBody({ maxBytes });
  const replay = idempotency({
    store: core.idempotency,
    onStoreError: (error) => logger.warn({ err: error }, 'idempotency store failed'),
  });
  return async function jsonBodyWithIdempotency(c, next) {
    await read(c, async () => {
      await replay(c, next);
    });
  };
}
