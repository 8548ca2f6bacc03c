/** @module Tests of responses built once (response.ts): which header fields reach which response. */
import { ErrorCode, ParleyError } from '@parley/core';
import { Hono } from 'hono';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { ParleyEnv } from './env.js';
import { createLogger } from './logger.js';
import { errorHandler } from './middleware/error-handler.js';
import { requestContext } from './middleware/request-context.js';
import { headerFieldsOf, json, setHeader } from './response.js';

/** An app with Parley's request context and error handler, and `routes` added to it. */
function app(routes: (app: Hono<ParleyEnv>) => void): Hono<ParleyEnv> {
  const logger = createLogger('error');
  const built = new Hono<ParleyEnv>();
  built.use(requestContext({ logger }));
  routes(built);
  built.onError(errorHandler({ logger }));
  return built;
}

describe('response header fields', () => {
  it('builds a route response with every field set before it, and the request id kept from the request', async () => {
    const served = app((a) =>
      a.get('/', (c) => {
        setHeader(c, 'ETag', '"a"');
        setHeader(c, 'etag', '"b"'); // one field, whatever the case: the last value wins
        return json(c, { ok: true }, 201);
      }),
    );
    const response = await served.request('/', { headers: { 'X-Request-Id': 'req-1' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('ETag')).toBe('"b"');
    expect(response.headers.get('X-Request-Id')).toBe('req-1');
    expect(response.headers.get('Content-Type')).toBe('application/json');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('adds a field set after the response was built (a decision made late) to that response', async () => {
    const served = app((a) =>
      a.get('/', (c) => {
        const response = json(c, {});
        setHeader(c, 'RateLimit', '"free";r=1;t=36');
        return response;
      }),
    );
    const response = await served.request('/');
    expect(response.headers.get('RateLimit')).toBe('"free";r=1;t=36');
  });

  it('copies the fields onto a response Parley did not build (a host route using c.json)', async () => {
    const served = app((a) =>
      a.get('/', (c) => {
        setHeader(c, 'Allow', 'GET');
        return c.json({ host: true });
      }),
    );
    const response = await served.request('/', { headers: { 'X-Request-Id': 'not a sane id!' } });
    expect(response.headers.get('Allow')).toBe('GET');
    expect(response.headers.get('X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("keeps on an error response the fields a host set with c.header() before the failure, and Parley's own", async () => {
    const host = new Hono<ParleyEnv>();
    host.use(async (c, next) => {
      c.header('X-Host', 'yes');
      await next();
    });
    host.route(
      '/',
      app((a) =>
        a.get('/', (c) => {
          setHeader(c, 'Retry-After', '7');
          throw new ParleyError(ErrorCode.serviceUnavailable, 'Down.');
        }),
      ),
    );
    host.onError(errorHandler({ logger: createLogger('error') }));
    const response = await host.request('/');
    expect(response.status).toBe(503);
    expect(response.headers.get('X-Host')).toBe('yes');
    expect(response.headers.get('Retry-After')).toBe('7');
    expect(response.headers.get('X-Request-Id')).not.toBeNull();
  });
});

describe('header field copies', () => {
  it("headerFieldsOf's copies keep one hidden class when content-type is added (no old-generation garbage per error)", async () => {
    // On Node 20 a spread copy given a field it lacked gets a hidden class of its own, allocated in
    // the old generation: every error response (401s of unknown keys, 404s of random paths) left
    // garbage there, and the server's RSS grew with hostile requests (bench/src/attack-memory.ts).
    setFlagsFromString('--allow-natives-syntax');
    const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
    const copies: Array<Record<string, string>> = [];
    const served = app((a) =>
      a.get('/', (c) => {
        setHeader(c, 'WWW-Authenticate', 'Bearer realm="parley"');
        const fields = headerFieldsOf(c);
        fields['content-type'] = 'application/json'; // as the error handler does
        copies.push(fields);
        return json(c, {});
      }),
    );
    for (let n = 0; n < 2_000; n += 1) await served.request('/', { headers: { 'X-Request-Id': `req-${n}` } });
    const last = copies.at(-1)!;
    expect(copies.slice(-100).filter((copy) => !haveSameMap(copy, last))).toHaveLength(0);
  });
});
