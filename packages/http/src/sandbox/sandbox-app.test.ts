/** @module Tests of the plants sandbox: shapes, limit validation and flat errors. */
import { memoryAdapters } from '@parley/adapter-memory';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../app/logger.js';
import { harness, json } from '../test-support/harness.js';
import { plantStoreFor } from './plant-store-for.js';
import { createSandboxApp } from './sandbox-app.js';

const flat = { error: expect.any(Number), message: expect.any(String) };

describe('/sandbox (plants-openapi.json)', () => {
  it('GET /plants lists the sample catalogue as a JSON array; limit caps it; 0 is []', async () => {
    const h = await harness();
    const all = await h.call('GET', '/sandbox/plants');
    expect(all.status).toBe(200);
    const plants = await json(all);
    expect(plants.length).toBeGreaterThan(2);
    for (const plant of plants)
      expect(plant).toEqual({ id: expect.any(Number), name: expect.any(String), tag: expect.any(String) });
    expect(await json(await h.call('GET', '/sandbox/plants?limit=2'))).toEqual(plants.slice(0, 2));
    expect(await json(await h.call('GET', '/sandbox/plants?limit=0'))).toEqual([]);
    expect(await json(await h.call('GET', '/sandbox/plants?limit=2147483647'))).toEqual(plants);
  });

  it.each(['-1', '1.5', 'abc', '2147483648', ''])('GET /plants?limit=%s is a flat 400', async (limit) => {
    const h = await harness();
    const response = await h.call('GET', `/sandbox/plants?limit=${limit}`);
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ error: 400, message: expect.stringContaining('limit') });
  });

  it('POST /plants adds a NewPlant and answers 200 with it; a taken id is a flat 409', async () => {
    const h = await harness();
    const created = await h.call('POST', '/sandbox/plants', { json: { id: 100, name: 'Fern', tag: 'houseplant' } });
    expect(created.status).toBe(200);
    expect(await json(created)).toEqual({ id: 100, name: 'Fern', tag: 'houseplant' });
    expect(await json(await h.call('GET', '/sandbox/plants'))).toContainEqual({
      id: 100,
      name: 'Fern',
      tag: 'houseplant',
    });
    const taken = await h.call('POST', '/sandbox/plants', { json: { id: 100, name: 'Fern again' } });
    expect(taken.status).toBe(409);
    expect(await json(taken)).toEqual({ error: 409, message: expect.any(String) });
  });

  it.each([[{ name: 'No id' }], [{ id: 'seven', name: 'x' }], [{ id: 7 }], [{ id: 7, name: 'x', colour: 'green' }]])(
    'POST /plants %j is a flat 400',
    async (body) => {
      const h = await harness();
      const response = await h.call('POST', '/sandbox/plants', { json: body });
      expect(response.status).toBe(400);
      expect(await json(response)).toEqual({ error: 400, message: expect.any(String) });
    },
  );

  it('DELETE /plants/{id} answers 204 with no body; unknown is a flat 404; a non-integer id a flat 400', async () => {
    const h = await harness();
    const deleted = await h.call('DELETE', '/sandbox/plants/1');
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect(await json(await h.call('DELETE', '/sandbox/plants/1'))).toEqual({
      error: 404,
      message: expect.any(String),
    });
    expect(await json(await h.call('DELETE', '/sandbox/plants/abc'))).toEqual({
      error: 400,
      message: expect.any(String),
    });
  });

  it('plants are per workspace', async () => {
    const h = await harness();
    await h.call('DELETE', '/sandbox/plants/1');
    expect((await json(await h.call('GET', '/sandbox/plants', { key: h.otherKey })))[0].id).toBe(1);
  });

  it('401, 403, 404, 405, 413 and 415 are flat too', async () => {
    const h = await harness({ bodyLimitBytes: 32 });
    const cases: Array<[Response, number]> = [
      [await h.call('GET', '/sandbox/plants', { key: null }), 401],
      [await h.call('GET', '/sandbox/plants', { key: 'unknown-key' }), 401],
      [await h.call('GET', '/sandbox/plants', { key: await h.keyWith(['agents:read']) }), 403],
      [
        await h.call('POST', '/sandbox/plants', { key: await h.keyWith(['plants:read']), json: { id: 9, name: 'x' } }),
        403,
      ],
      [await h.call('GET', '/sandbox/trees'), 404],
      [await h.call('PUT', '/sandbox/plants'), 405],
      [await h.call('POST', '/sandbox/plants', { json: { id: 9, name: 'x'.repeat(64) } }), 413],
      [
        await h.call('POST', '/sandbox/plants', {
          raw: 'id=9',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        }),
        415,
      ],
      [
        await h.call('POST', '/sandbox/plants', { raw: '{"id":', headers: { 'Content-Type': 'application/json' } }),
        400,
      ],
    ];
    for (const [response, status] of cases) {
      expect(response.status).toBe(status);
      expect(await json(response)).toEqual({ ...flat, error: status });
    }
    expect(cases[0]![0].headers.get('WWW-Authenticate')).toMatch(/^Bearer /);
    expect(cases[5]![0].headers.get('Allow')).toBe('GET, HEAD, POST');
  });

  it('an unexpected failure is a flat 500 without internals', async () => {
    const adapters = memoryAdapters();
    plantStoreFor(adapters).list = async () => {
      throw new Error('disk on fire under /var/lib/parley');
    };
    const h = await harness({}, adapters);
    const response = await h.call('GET', '/sandbox/plants');
    expect(response.status).toBe(500);
    expect(await json(response)).toEqual({ error: 500, message: 'Internal server error.' });
  });

  it('plants:read and plants:write scopes gate reads and writes', async () => {
    const h = await harness();
    const reader = await h.keyWith(['plants:read']);
    expect((await h.call('GET', '/sandbox/plants', { key: reader })).status).toBe(200);
    expect((await h.call('DELETE', '/sandbox/plants/1', { key: reader })).status).toBe(403);
    expect((await h.call('DELETE', '/sandbox/plants/1', { key: await h.keyWith(['plants:write']) })).status).toBe(204);
  });

  it('can be mounted anywhere in a host app, keeping its own flat errors', async () => {
    const h = await harness();
    const host = new Hono().route('/demo', createSandboxApp(h.core, { logger: createLogger('silent') }));
    const listed = await host.request('/demo/plants?limit=1', { headers: { Authorization: `Bearer ${h.key}` } });
    expect(await json(listed)).toHaveLength(1);
    const missing = await host.request('/demo/nothing', { headers: { Authorization: `Bearer ${h.key}` } });
    expect(missing.status).toBe(404);
    expect(await json(missing)).toEqual({ error: 404, message: expect.any(String) });
    expect(await json(await host.request('/demo/plants'))).toEqual({ error: 401, message: expect.any(String) });
  });
});
