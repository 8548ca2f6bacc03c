/** @module `toErrorResponse` as a host uses it, from the package's entry: host routes that call core. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '../../index.js';
import { captureLogs } from '../../test-support/harness.js';

describe('toErrorResponse (a host route calling core)', () => {
  it('answers a core not_found as 404 in the API shape, a validation failure as 400 with its issues', async () => {
    const core = createCore(memoryAdapters());
    const { logger, lines } = captureLogs();
    const host = new Hono();
    host.get('/tickets/:id', async (c) => {
      try {
        return c.json(await core.conversations.get({ workspaceId: 'support' }, c.req.param('id')));
      } catch (error) {
        return toErrorResponse(error, c, { logger });
      }
    });
    host.post('/agents', async (c) => {
      try {
        return c.json(await core.agents.create({ workspaceId: 'support' }, await c.req.json()), 201);
      } catch (error) {
        return toErrorResponse(error, c, { logger });
      }
    });
    const missing = await host.request('/tickets/conv_missing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { code: 'not_found', message: expect.stringContaining('conv_missing') },
    });
    const invalid = await host.request('/agents', { method: 'POST', body: JSON.stringify({ name: '' }) });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      error: { code: 'validation_failed', details: { issues: expect.any(Array) } },
    });
    expect(lines).toEqual([]); // the caller's mistakes are not logged as failures
  });

  it('answers a malformed JSON body read by the host route with c.req.json() as 400 invalid_request, unlogged', async () => {
    const core = createCore(memoryAdapters());
    const { logger, lines } = captureLogs();
    const host = new Hono();
    host.onError((error, c) => toErrorResponse(error, c, { logger }));
    host.post('/agents', async (c) =>
      c.json(await core.agents.create({ workspaceId: 'support' }, await c.req.json()), 201),
    );
    for (const body of ['{bad', '', '{"name": "x",}', '[1, 2']) {
      const response = await host.request('/agents', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: { code: 'invalid_request', message: 'Malformed JSON in the request body.' },
      });
    }
    expect(lines).toEqual([]);
  });

  it('keeps a SyntaxError that is not about the request body a 500', async () => {
    const { logger, lines } = captureLogs();
    const host = new Hono();
    host.onError((error, c) => toErrorResponse(error, c, { logger }));
    host.get('/broken', (c) => c.json(JSON.parse('{not stored json')));
    expect((await host.request('/broken')).status).toBe(500);
    expect(lines).toHaveLength(1);
  });

  it('answers anything unexpected as a generic 500 and logs the cause, never echoing it', async () => {
    const { logger, lines } = captureLogs();
    const host = new Hono();
    host.onError((error, c) => toErrorResponse(error, c, { logger }));
    host.get('/boom', () => {
      throw new Error('secret://db-password');
    });
    const response = await host.request('/boom');
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal_error', message: 'Internal server error.' } });
    expect(text).not.toContain('secret');
    expect(lines.map((line) => line.msg)).toEqual(['request failed']);
  });

  it('renders the sandbox shape on request', async () => {
    const core = createCore(memoryAdapters());
    const host = new Hono();
    host.get('/plant', async (c) => {
      try {
        return c.json(await core.agents.get({ workspaceId: 'support' }, 'agt_missing'));
      } catch (error) {
        return toErrorResponse(error, c, { shape: 'sandbox' });
      }
    });
    const response = await host.request('/plant');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 404, message: expect.any(String) });
  });
});
