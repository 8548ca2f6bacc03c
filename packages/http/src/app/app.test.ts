/** @module Tests of the composed app: routing, error precedence, request ids, logs, embedding. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { agentInput, captureLogs, harness, json } from '../test-support/harness.js';

describe('createApp', () => {
  describe('routing', () => {
    it.each([
      ['GET', '/api/nothing-here'],
      ['GET', '/api/agents/agt_1/extra'],
      ['GET', '/api'],
    ])('an unknown route %s %s is 404 not_found once authenticated', async (method, path) => {
      const h = await harness();
      const response = await h.call(method, path);
      expect(response.status).toBe(404);
      expect((await json(response)).error.code).toBe('not_found');
    });

    it('a path outside /api and /sandbox is 404 not_found without authentication', async () => {
      const h = await harness();
      const response = await h.call('GET', '/favicon.ico', { key: null });
      expect(response.status).toBe(404);
      expect((await json(response)).error.code).toBe('not_found');
    });

    it.each([
      ['PUT', '/api/agents', 'GET, HEAD, POST'],
      ['POST', '/api/agents/agt_1', 'DELETE, GET, HEAD, PATCH'],
      ['PUT', '/api/conversations/conv_1', 'DELETE, GET, HEAD, PATCH'],
      ['PUT', '/api/conversations/conv_1/messages', 'GET, HEAD, POST'],
      ['DELETE', '/api/webhooks', 'GET, HEAD, POST'],
    ])('%s %s is 405 method_not_allowed with Allow: %s', async (method, path, allow) => {
      const h = await harness();
      const response = await h.call(method, path);
      expect(response.status).toBe(405);
      expect(response.headers.get('Allow')).toBe(allow);
      expect((await json(response)).error.code).toBe('method_not_allowed');
    });

    it.each([
      ['POST', '/healthz', 'GET, HEAD'],
      ['DELETE', '/readyz', 'GET, HEAD'],
      ['PUT', '/openapi.json', 'GET, HEAD'],
      ['POST', '/docs', 'GET, HEAD'],
      ['DELETE', '/docs/assets/scalar-api-reference.js', 'GET, HEAD'],
    ])(
      '%s %s, a known path without authentication, is 405 method_not_allowed with Allow: %s',
      async (method, path, allow) => {
        const h = await harness();
        const response = await h.call(method, path, { key: null });
        expect(response.status).toBe(405);
        expect(response.headers.get('Allow')).toBe(allow);
        expect((await json(response)).error.code).toBe('method_not_allowed');
      },
    );

    it('HEAD is answered by the GET route', async () => {
      const h = await harness();
      const response = await h.call('HEAD', '/api/agents');
      expect(response.status).toBe(200);
    });
  });

  describe('error precedence (docs/errors.md)', () => {
    it('401 before route 404 and 405', async () => {
      const h = await harness();
      expect((await h.call('GET', '/api/unknown', { key: null })).status).toBe(401);
      expect((await h.call('PUT', '/api/agents', { key: 'nope-nope' })).status).toBe(401);
    });

    it('every /api and /sandbox route the app registers answers 401 without a key, and nothing is written', async () => {
      const h = await harness();
      // Read from the router itself, so a route added later without the guard fails here.
      const guarded = [
        ...new Set(
          h.app.routes
            .filter((route) => route.method !== 'ALL' && /^\/(api|sandbox)\//.test(route.path))
            .map((route) => `${route.method} ${route.path}`),
        ),
      ];
      expect(guarded).toEqual(
        expect.arrayContaining([
          'GET /api/agents/:id',
          'POST /api/conversations/:id/messages',
          'GET /api/conversations/:id/stream',
          'DELETE /sandbox/plants/:id',
        ]),
      );
      for (const route of guarded) {
        const [method, template] = route.split(' ') as [string, string];
        const path = template.replace(/:\w+/g, 'x_1');
        const response = await h.call(method, path, {
          key: null,
          json: method === 'GET' || method === 'DELETE' ? undefined : agentInput,
        });
        expect({ route, status: response.status }).toEqual({ route, status: 401 });
        expect(response.headers.get('WWW-Authenticate'), route).toMatch(/^Bearer realm="parley"/);
      }
      // Every write records an event (docs/events-and-webhooks.md, "The event log"): none, nothing written.
      expect((await json(await h.call('GET', '/api/events'))).events).toEqual([]);
      expect((await json(await h.call('GET', '/api/agents'))).agents).toEqual([]);
    });

    it('route 404/405 before 403 scope', async () => {
      const h = await harness();
      const none = await h.keyWith([]);
      expect((await h.call('GET', '/api/unknown', { key: none })).status).toBe(404);
      expect((await h.call('PUT', '/api/agents', { key: none })).status).toBe(405);
    });

    it('403 scope before 413 body size and 415 media type', async () => {
      const h = await harness({ bodyLimitBytes: 16 });
      const reader = await h.keyWith(['agents:read']);
      const oversized = await h.call('POST', '/api/agents', { key: reader, json: agentInput });
      expect(oversized.status).toBe(403);
      expect(
        (await h.call('POST', '/api/agents', { key: reader, raw: 'x', headers: { 'Content-Type': 'text/plain' } }))
          .status,
      ).toBe(403);
    });

    it('413 before 415 before 400 JSON before 400 schema', async () => {
      const h = await harness({ bodyLimitBytes: 16 });
      expect(
        (
          await h.call('POST', '/api/agents', {
            raw: '{not json at all, and long}',
            headers: { 'Content-Type': 'text/plain' },
          })
        ).status,
      ).toBe(413);
      const small = await harness();
      expect(
        (await small.call('POST', '/api/agents', { raw: '{not json', headers: { 'Content-Type': 'text/plain' } }))
          .status,
      ).toBe(415);
      const malformed = await small.call('POST', '/api/agents', {
        raw: '{not json',
        headers: { 'Content-Type': 'application/json' },
      });
      expect((await json(malformed)).error.code).toBe('invalid_request');
    });

    it('400 schema before 404 resource before 409 state', async () => {
      const h = await harness();
      const invalid = await h.call('POST', '/api/conversations/conv_missing/messages', { json: { content: '' } });
      expect((await json(invalid)).error.code).toBe('validation_failed');
      expect(
        (await h.call('POST', '/api/conversations/conv_missing/messages', { json: { content: 'x', role: 'user' } }))
          .status,
      ).toBe(404);
      const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
      const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
      await h.call('PATCH', `/api/conversations/${conversation.id}`, { json: { status: 'completed' } });
      const completed = await h.call('POST', `/api/conversations/${conversation.id}/messages`, {
        json: { content: 'x', role: 'robot' },
      });
      expect(completed.status).toBe(400);
    });
  });

  describe('request ids and logs', () => {
    it('every response carries X-Request-Id, errors and probes included', async () => {
      const h = await harness();
      for (const [method, path, key] of [
        ['GET', '/healthz', null],
        ['GET', '/api/agents', undefined],
        ['GET', '/api/agents', null],
        ['GET', '/nowhere', null],
        ['GET', '/sandbox/plants', null],
      ] as const) {
        const response = await h.call(method, path, { key });
        expect(response.headers.get('X-Request-Id'), `${method} ${path}`).toMatch(/^[0-9a-f-]{36}$/);
      }
    });

    it('keeps a sane incoming X-Request-Id and replaces an unsafe one', async () => {
      const h = await harness();
      const kept = await h.call('GET', '/healthz', { headers: { 'X-Request-Id': 'trace-abc_123' } });
      expect(kept.headers.get('X-Request-Id')).toBe('trace-abc_123');
      const replaced = await h.call('GET', '/healthz', { headers: { 'X-Request-Id': 'evil id\twith "quotes"' } });
      expect(replaced.headers.get('X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('logs one JSON line per request with request id, method, path, status and duration', async () => {
      const { lines, logger } = captureLogs();
      const h = await harness({ logger });
      await h.call('GET', '/api/agents?limit=5', { headers: { 'X-Request-Id': 'req-1' } });
      await h.call('GET', '/api/agents', { key: null, headers: { 'X-Request-Id': 'req-2' } });
      expect(lines).toEqual([
        expect.objectContaining({
          msg: 'request',
          requestId: 'req-1',
          method: 'GET',
          path: '/api/agents',
          status: 200,
          durationMs: expect.any(Number),
        }),
        expect.objectContaining({ msg: 'request', requestId: 'req-2', status: 401 }),
      ]);
    });
  });

  describe('embedding', () => {
    it('mounts under a prefix of a host app (the README sample), keeping its 404/405 and shapes', async () => {
      const core = createCore(memoryAdapters());
      const { key } = await core.apiKeys.issue({ workspaceId: 'acme', plan: 'pro' });
      const host = new Hono();
      host.get('/', (c) => c.text('my product'));
      host.route('/parley', createApp(core, { logLevel: 'silent' }));
      const auth = { headers: { Authorization: `Bearer ${key}` } };
      expect(await (await host.request('/')).text()).toBe('my product');
      expect((await host.request('/parley/api/agents', auth)).status).toBe(200);
      expect((await host.request('/parley/healthz')).status).toBe(200);
      const unknown = await host.request('/parley/api/nothing', auth);
      expect(await json(unknown)).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
      const wrongMethod = await host.request('/parley/api/agents', { ...auth, method: 'PUT' });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('Allow')).toBe('GET, HEAD, POST');
      const wrongProbeMethod = await host.request('/parley/healthz', { method: 'POST' });
      expect(wrongProbeMethod.status).toBe(405);
      expect(await json(wrongProbeMethod)).toEqual({
        error: { code: 'method_not_allowed', message: expect.any(String) },
      });
      const unauthenticated = await host.request('/parley/sandbox/plants');
      expect(await json(unauthenticated)).toEqual({ error: 401, message: expect.any(String) });
    });
  });
});
