/** @module Tests of the rate-limit middleware in a tiny Hono app of its own, on a manual clock. */
import { memoryAdapters } from '@parley/adapter-memory';
import {
  createCore,
  isParleyError,
  ParleyError,
  type Adapters,
  type Core,
  type CoreSettings,
  type Principal,
} from '@parley/core';
import { ManualClock } from '@parley/core/testing';
import { Hono, type ErrorHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { describe, expect, it } from 'vitest';
import type { ParleyEnv } from '../env.js';
import { rateLimit, type RateLimitOptions } from './rate-limit.js';

const PRINCIPALS: Record<string, Principal> = {
  'free-a': { keyId: 'key_a', workspaceId: 'ws_a', plan: 'free', scopes: ['*'] },
  'free-a2': { keyId: 'key_a2', workspaceId: 'ws_a', plan: 'free', scopes: ['*'] },
  'free-b': { keyId: 'key_b', workspaceId: 'ws_b', plan: 'free', scopes: ['*'] },
  'ent-10': { keyId: 'key_e', workspaceId: 'ws_e', plan: 'enterprise', scopes: ['*'], limitPerHour: 10 },
  'ent-7': { keyId: 'key_s', workspaceId: 'ws_s', plan: 'enterprise', scopes: ['*'], limitPerHour: 7 },
};
const STATUS: Record<string, ContentfulStatusCode> = {
  unauthorized: 401,
  not_found: 404,
  rate_limit_exceeded: 429,
  service_unavailable: 503,
};

/** A stand-in for the app's error handler: `{error:{code,message,details}}`, Retry-After from details. */
const renderError: ErrorHandler<ParleyEnv> = (error, c) => {
  if (!isParleyError(error)) return c.json({ error: { code: 'internal_error', message: 'Internal error.' } }, 500);
  const retryAfter = error.details?.['retryAfterSeconds'];
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  return c.json(
    { error: { code: error.code, message: error.message, details: error.details } },
    STATUS[error.code] ?? 500,
  );
};

function setup(
  options: {
    adapters?: Partial<Adapters>;
    core?: CoreSettings;
    middleware?: RateLimitOptions;
    onError?: ErrorHandler<ParleyEnv>;
  } = {},
) {
  const clock = new ManualClock();
  const core: Core = createCore({ ...memoryAdapters(), ...options.adapters }, { clock, ...options.core });
  const app = new Hono<ParleyEnv>();
  app.use(async function fakeAuth(c, next) {
    const principal = PRINCIPALS[c.req.header('authorization') ?? ''];
    if (!principal) throw new ParleyError('unauthorized', 'Missing or unknown API key.');
    c.set('principal', principal);
    await next();
  });
  app.use(rateLimit(core, options.middleware));
  app.get('/ok', (c) => c.json({ ok: true }));
  app.get('/raw', () => new Response('made without the context'));
  app.get('/moved', () => Response.redirect('http://localhost/ok', 302)); // immutable headers
  app.get('/missing', () => {
    throw ParleyError.notFound('agent', 'agt_1');
  });
  app.onError(options.onError ?? renderError);
  const get = (key: string | null, path = '/ok') =>
    app.request(path, key === null ? {} : { headers: { authorization: key } });
  return { app, clock, get };
}

const fields = (res: Response) => ({
  status: res.status,
  policy: res.headers.get('RateLimit-Policy'),
  limit: res.headers.get('RateLimit'),
  retryAfter: res.headers.get('Retry-After'),
});
const FREE_POLICY = '"free";q=100;w=3600';

describe('rateLimit middleware', () => {
  it('announces the Free policy on the first request: 99 left, full again in 36 s', async () => {
    const { get } = setup();
    expect(fields(await get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=99;t=36',
      retryAfter: null,
    });
    expect(fields(await get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=98;t=72',
      retryAfter: null,
    });
  });

  it('answers the 101st request of a Free workspace with 429, Retry-After and the fields', async () => {
    const { get } = setup();
    for (let i = 1; i < 100; i++) expect((await get(i % 2 ? 'free-a' : 'free-a2')).status).toBe(200);
    expect(fields(await get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=0;t=3600',
      retryAfter: null,
    });
    const refused = await get('free-a2');
    expect(fields(refused)).toEqual({ status: 429, policy: FREE_POLICY, limit: '"free";r=0;t=3600', retryAfter: '36' });
    expect(await refused.json()).toEqual({
      error: {
        code: 'rate_limit_exceeded',
        message: 'Rate limit exceeded: the free plan allows 100 requests per hour. Retry after 36 s.',
        details: { retryAfterSeconds: 36 },
      },
    });
  });

  it('gives quota back as the clock rolls, to the millisecond, and refusals cost nothing', async () => {
    const { clock, get } = setup();
    for (let i = 0; i < 100; i++) await get('free-a');
    for (let i = 0; i < 20; i++) expect((await get('free-a')).status).toBe(429);
    clock.advance(35_999); // 1 ms short of one emission interval: reset in 3 564 001 ms
    expect(fields(await get('free-a'))).toEqual({
      status: 429,
      policy: FREE_POLICY,
      limit: '"free";r=0;t=3565',
      retryAfter: '1',
    });
    clock.advance(1);
    expect(fields(await get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=0;t=3600',
      retryAfter: null,
    });
    clock.advance(360_000); // ten intervals: ten back, this request takes one
    expect(fields(await get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=9;t=3276',
      retryAfter: null,
    });
    clock.advance(3_276_000); // the announced t: the whole quota is back
    expect(fields(await get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=99;t=36',
      retryAfter: null,
    });
  });

  it('keeps the quotas of two workspaces apart', async () => {
    const { get } = setup();
    for (let i = 0; i < 100; i++) await get('free-a');
    expect((await get('free-a')).status).toBe(429);
    expect(fields(await get('free-b'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=99;t=36',
      retryAfter: null,
    });
  });

  it("applies an Enterprise key's own limitPerHour", async () => {
    const { get } = setup();
    const policy = '"enterprise";q=10;w=3600';
    expect(fields(await get('ent-10'))).toEqual({
      status: 200,
      policy,
      limit: '"enterprise";r=9;t=360',
      retryAfter: null,
    });
    for (let i = 0; i < 9; i++) expect((await get('ent-10')).status).toBe(200);
    expect(fields(await get('ent-10'))).toEqual({
      status: 429,
      policy,
      limit: '"enterprise";r=0;t=3600',
      retryAfter: '360',
    });
    // 7/h does not divide the hour: T = ceil(3 600 000 / 7) = 514 286 ms, so t = 515 s.
    expect(fields(await get('ent-7'))).toEqual({
      status: 200,
      policy: '"enterprise";q=7;w=3600',
      limit: '"enterprise";r=6;t=515',
      retryAfter: null,
    });
  });

  it('puts the fields on error responses, unknown routes and hand-made Responses too', async () => {
    const { get } = setup();
    expect(fields(await get('free-a', '/missing'))).toEqual({
      status: 404,
      policy: FREE_POLICY,
      limit: '"free";r=99;t=36',
      retryAfter: null,
    });
    expect(fields(await get('free-a', '/nowhere'))).toEqual({
      status: 404,
      policy: FREE_POLICY,
      limit: '"free";r=98;t=72',
      retryAfter: null,
    });
    expect(fields(await get('free-a', '/raw'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=97;t=108',
      retryAfter: null,
    });
    const moved = await get('free-a', '/moved');
    expect(fields(moved)).toEqual({ status: 302, policy: FREE_POLICY, limit: '"free";r=96;t=144', retryAfter: null });
    expect(moved.headers.get('Location')).toBe('http://localhost/ok');
  });

  it('keeps the fields and Retry-After on a 429 that onError builds without the context', async () => {
    const { get } = setup({ onError: (error) => new Response((error as Error).message, { status: 429 }) });
    for (let i = 0; i < 100; i++) await get('free-a');
    expect(fields(await get('free-a'))).toEqual({
      status: 429,
      policy: FREE_POLICY,
      limit: '"free";r=0;t=3600',
      retryAfter: '36',
    });
  });

  it('neither counts nor annotates requests without a principal (the 401s)', async () => {
    const { get } = setup();
    for (let i = 0; i < 5; i++)
      expect(fields(await get(null))).toEqual({ status: 401, policy: null, limit: null, retryAfter: null });
    expect((await get('free-a')).headers.get('RateLimit')).toBe('"free";r=99;t=36');
  });

  it('admits exactly 100 of 500 concurrent requests of one Free workspace', async () => {
    const { get } = setup();
    const responses = await Promise.all(Array.from({ length: 500 }, (_, i) => get(i % 2 ? 'free-a' : 'free-a2')));
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((status) => status !== 429).length).toBe(100);
    expect(statuses.filter((status) => status === 200).length).toBe(100);
    const remaining = responses.filter((res) => res.status === 200).map((res) => res.headers.get('RateLimit'));
    expect(new Set(remaining).size).toBe(100);
    expect(responses.filter((res) => res.status === 429).every((res) => res.headers.get('Retry-After') === '36')).toBe(
      true,
    );
  });

  it('fails open by default when the store is down, and with 503 when configured closed', async () => {
    const down = { hit: () => Promise.reject(new Error('down')) };
    const quiet = { onRateLimitStoreError: () => undefined };
    const open = setup({ adapters: { rateLimits: down }, core: quiet });
    expect(fields(await open.get('free-a'))).toEqual({
      status: 200,
      policy: FREE_POLICY,
      limit: '"free";r=99;t=36',
      retryAfter: null,
    });
    const closed = setup({ adapters: { rateLimits: down }, core: { ...quiet, rateLimitFailure: 'closed' } });
    const res = await closed.get('free-a');
    expect(fields(res)).toEqual({ status: 503, policy: FREE_POLICY, limit: '"free";r=0;t=1', retryAfter: '1' });
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
    const as429 = setup({
      adapters: { rateLimits: down },
      core: { ...quiet, rateLimitFailure: 'closed' },
      middleware: { failClosedCode: 'rate_limit_exceeded' },
    });
    expect((await as429.get('free-a')).status).toBe(429);
  });

  it("is a named middleware over a core's limiter", () => {
    expect(rateLimit(createCore(memoryAdapters())).name).toBe('rateLimit');
  });
});
