/**
 * @module Redis faults at the HTTP layer, with real ioredis clients pointed at a port where no
 * Redis listens (no mock, and no server needed): the key lookup failing is 503 in both error
 * shapes, `/readyz` is 503, and the rate limiter follows `RATE_LIMIT_FAILURE` within 250 ms.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { RedisApiKeyStore, RedisRateLimitStore, RedisStorage } from '@parley/adapter-redis';
import { generateApiKey, type Adapters } from '@parley/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { SERVER_REDIS_TIMEOUT_MS } from './backend.js';
import { createServerCore } from './start.js';
import { captureLogs } from '../test-support/harness.js';
import { freeRedisPort } from '../test-support/redis.js';

/** A request must be answered within this (docs/errors.md: 503 instead of hanging). */
const ANSWER_WITHIN_MS = 1_000;
/**
 * What decided a rate-limit hit the store did not answer: the limiter's own 250 ms deadline, not
 * the store's longer timeout (checked by the logged error rather than the answer's time, which a
 * loaded test machine stretches).
 */
const LIMITER_DEADLINE = 'Rate-limit store did not answer within 250 ms';

describe('Redis faults at the HTTP layer', () => {
  let url: string;
  const opened: Array<{ close(): Promise<void> }> = [];
  const options = () => ({ url, timeoutMs: SERVER_REDIS_TIMEOUT_MS });

  beforeAll(async () => {
    url = `redis://127.0.0.1:${await freeRedisPort()}`;
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
  });

  function open<T extends { close(): Promise<void> }>(store: T): T {
    opened.push(store);
    return store;
  }

  /**
   * An app whose adapters are memory except `overrides`. Its bearer key is issued in memory, or,
   * when the key store is the unreachable one, any well-formed key (the lookup fails regardless).
   */
  async function app(overrides: Partial<Adapters>, failure: 'open' | 'closed' = 'open') {
    const { lines, logger } = captureLogs();
    const adapters = { ...memoryAdapters(), ...overrides };
    const core = createServerCore(adapters, { rateLimitFailure: failure, webhookAllowPrivateUrls: false }, logger);
    const key = overrides.apiKeys
      ? 'any-well-formed-key-0123456789'
      : (await core.apiKeys.issue({ workspaceId: 'acme', plan: 'free' })).key;
    const hono = createApp(core, { logger });
    const call = async (path: string, bearer = key) => {
      const started = Date.now();
      const response = await hono.request(path, {
        headers: { Authorization: `Bearer ${bearer}`, 'X-Request-Id': 'req-fault' },
      });
      return { response, elapsed: Date.now() - started, body: (await response.json()) as unknown };
    };
    return { call, lines };
  }

  it('the key lookup failing is 503 service_unavailable — not 401 or 500 — in the /api shape, within a second', async () => {
    const { call, lines } = await app({
      apiKeys: open(new RedisApiKeyStore(options())),
      rateLimits: open(new RedisRateLimitStore(options())),
    });
    const { response, elapsed, body } = await call('/api/agents');
    expect(response.status).toBe(503);
    expect(body).toEqual({ error: { code: 'service_unavailable', message: 'Storage is unavailable.' } });
    expect(response.headers.get('WWW-Authenticate')).toBeNull();
    expect(elapsed).toBeLessThan(ANSWER_WITHIN_MS);
    expect(lines.find((line) => line.msg === 'request failed')).toMatchObject({ level: 40, requestId: 'req-fault' });
  });

  it('a generated key whose checksum fails is 401 even with the key store down: it is never looked up', async () => {
    const { call } = await app({
      apiKeys: open(new RedisApiKeyStore(options())),
      rateLimits: open(new RedisRateLimitStore(options())),
    });
    const key = generateApiKey();
    const typo = `${key.slice(0, -3)}${key.at(-3) === '0' ? '1' : '0'}${key.slice(-2)}`;
    const refused = await call('/api/agents', typo);
    expect(refused.response.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { code: 'unauthorized' } });
    // The same key, correct: looked up, and the store is down.
    expect((await call('/api/agents', key)).response.status).toBe(503);
  });

  it('the key lookup failing is 503 in the flat sandbox shape too', async () => {
    const { call } = await app({
      apiKeys: open(new RedisApiKeyStore(options())),
      rateLimits: open(new RedisRateLimitStore(options())),
    });
    const { response, elapsed, body } = await call('/sandbox/plants');
    expect(response.status).toBe(503);
    expect(body).toEqual({ error: 503, message: 'Storage is unavailable.' });
    expect(elapsed).toBeLessThan(ANSWER_WITHIN_MS);
  });

  it('/readyz is 503 within a second when Redis storage does not answer', async () => {
    const { call } = await app({
      storage: open(new RedisStorage(options())),
      rateLimits: open(new RedisRateLimitStore(options())),
    });
    const { response, elapsed, body } = await call('/readyz');
    expect(response.status).toBe(503);
    expect(body).toEqual({ error: { code: 'service_unavailable', message: 'Storage is unreachable.' } });
    expect(elapsed).toBeLessThan(ANSWER_WITHIN_MS);
  });

  it('RATE_LIMIT_FAILURE=open (the default): admits within about 250 ms and logs the failure', async () => {
    const { call, lines } = await app({ rateLimits: open(new RedisRateLimitStore(options())) }, 'open');
    const { response, elapsed } = await call('/api/agents');
    expect(response.status).toBe(200);
    expect(response.headers.get('RateLimit-Policy')).toBe('"free";q=100;w=3600');
    expect(elapsed).toBeLessThan(ANSWER_WITHIN_MS);
    expect(lines.find((line) => line.msg === 'rate-limit store failed')).toMatchObject({
      level: 40,
      key: 'acme',
      policy: 'open',
      err: { message: LIMITER_DEADLINE },
    });
  });

  it('RATE_LIMIT_FAILURE=closed: refuses with 503 and Retry-After: 1 within about 250 ms, and logs', async () => {
    const { call, lines } = await app({ rateLimits: open(new RedisRateLimitStore(options())) }, 'closed');
    const { response, elapsed, body } = await call('/api/agents');
    expect(response.status).toBe(503);
    expect(response.headers.get('Retry-After')).toBe('1');
    expect(body).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(elapsed).toBeLessThan(ANSWER_WITHIN_MS);
    expect(lines.find((line) => line.msg === 'rate-limit store failed')).toMatchObject({
      policy: 'closed',
      err: { message: LIMITER_DEADLINE },
    });
  });
});
