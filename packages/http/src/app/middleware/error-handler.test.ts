/** @module Tests of error rendering: the status table, 500s, 429 in both shapes, HTTPException. */
import { memoryAdapters } from '@parley/adapter-memory';
import { ErrorCode, ParleyError, createCore } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import type { ParleyEnv } from '../env.js';
import { STATUS_BY_CODE } from '../http-errors.js';
import { apiRoutes } from '../routes/api.js';
import { createSandboxApp } from '../../sandbox/sandbox-app.js';
import { captureLogs, harness, json } from '../../test-support/harness.js';
import { bearerAuth } from './bearer-auth.js';
import { errorHandler } from './error-handler.js';
import { jsonBody } from './json-body.js';
import { textOf } from '../response.js';

/** Stands in for the rate-limit middleware: sets RateLimit fields, then refuses. */
const refuse: MiddlewareHandler<ParleyEnv> = async function rateLimit(c) {
  c.header('RateLimit-Policy', '"pro";q=1000;w=3600');
  c.header('RateLimit', '"pro";r=0;t=42');
  throw new ParleyError(ErrorCode.rateLimitExceeded, 'Rate limit exceeded.', { retryAfterSeconds: 3.2 });
};

describe('errorHandler', () => {
  it('maps every error code to exactly one status', () => {
    expect(Object.keys(STATUS_BY_CODE).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('answers an unexpected error with 500 internal_error, no internals, and logs it with the request id', async () => {
    const adapters = memoryAdapters();
    adapters.storage.agents.list = async () => {
      throw new Error('connection to db://admin:hunter2@10.0.0.5 refused');
    };
    const { lines, logger } = captureLogs();
    const h = await harness({ logger }, adapters);
    const response = await h.call('GET', '/api/agents', { headers: { 'X-Request-Id': 'req-500' } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal_error', message: 'Internal server error.' } });
    expect(text).not.toMatch(/hunter2|db:|stack|Error:/);
    const failure = lines.find((line) => line.msg === 'request failed');
    expect(failure).toMatchObject({
      level: 50,
      requestId: 'req-500',
      err: { message: expect.stringContaining('refused') },
    });
  });

  it('renders rate_limit_exceeded as 429 with Retry-After, keeping headers set before the throw (/api shape)', async () => {
    const core = createCore(memoryAdapters());
    const key = (await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' })).key;
    const { logger } = captureLogs();
    const app = new Hono<ParleyEnv>()
      .route('/api', apiRoutes(core, { guard: [bearerAuth({ apiKeys: core.apiKeys }), refuse], body: jsonBody() }))
      .onError(errorHandler({ logger }));
    // An unknown route: 429 must still win over 404 (docs/errors.md).
    const response = await app.request('/api/nowhere', { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(429);
    expect(response.headers.get('Retry-After')).toBe('4');
    expect(response.headers.get('RateLimit')).toBe('"pro";r=0;t=42');
    expect(response.headers.get('RateLimit-Policy')).toBe('"pro";q=1000;w=3600');
    expect(await json(response)).toEqual({
      error: { code: 'rate_limit_exceeded', message: 'Rate limit exceeded.', details: { retryAfterSeconds: 3.2 } },
    });
    // A 401 comes first and never reaches the limiter.
    expect((await app.request('/api/agents')).status).toBe(401);
  });

  it('renders rate_limit_exceeded flat under the sandbox, with Retry-After and RateLimit headers', async () => {
    const h = await harness();
    const sandbox = createSandboxApp(h.core, {
      guard: [bearerAuth({ apiKeys: h.core.apiKeys }), refuse],
      logger: captureLogs().logger,
    });
    const response = await sandbox.request('/plants', { headers: { Authorization: `Bearer ${h.key}` } });
    expect(response.status).toBe(429);
    expect(response.headers.get('Retry-After')).toBe('4');
    expect(response.headers.get('RateLimit')).toBe('"pro";r=0;t=42');
    expect(await json(response)).toEqual({ error: 429, message: 'Rate limit exceeded.' });
  });

  it('maps a Hono HTTPException by status with a generic message', async () => {
    const app = new Hono<ParleyEnv>()
      .get('/teapot', () => {
        throw new HTTPException(413, { message: 'internal detail' });
      })
      .onError(errorHandler({ logger: captureLogs().logger }));
    const response = await app.request('/teapot');
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual({
      error: { code: 'payload_too_large', message: 'The request body is too large.' },
    });
  });
  it('hands on the response it built when a middleware read c.res to carry fields (as CORS and the rate limit do)', async () => {
    const app = new Hono<ParleyEnv>();
    const handedOn: Array<{ known: boolean; carried: string | null }> = [];
    app.use(async (c, next) => {
      await next();
      // What reaches outer middleware (compression, the request log) is the built response, its text known.
      handedOn.push({ known: textOf(c, c.res) !== undefined, carried: c.res.headers.get('X-Carried') });
    });
    app.use(async (c, next) => {
      c.res.headers.set('X-Carried', 'yes');
      await next();
    });
    app.get('/', () => {
      throw new ParleyError(ErrorCode.rateLimitExceeded, 'Rate limit exceeded.', { retryAfterSeconds: 1 });
    });
    app.onError(errorHandler({ logger: captureLogs().logger }));
    const response = await app.request('/');
    expect(response.status).toBe(429);
    expect(response.headers.get('X-Carried')).toBe('yes');
    expect(response.headers.get('Retry-After')).toBe('1');
    expect(handedOn).toEqual([{ known: true, carried: 'yes' }]);
  });
});
