/** @module Tests of the webhook endpoint routes: registration, secrets, CRUD, tenancy, targets. */
import { memoryAdapters } from '@parley/adapter-memory';
import { StaticHostResolver } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { harness, json } from '../../test-support/harness.js';

const registration = { url: 'https://example.com/hooks', events: ['agent.created', 'message.sent'] };

describe('/api/webhooks', () => {
  it('POST registers an enabled endpoint: 201, with the generated secret returned once', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/webhooks', { json: registration });
    expect(response.status).toBe(201);
    const endpoint = await json(response);
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^wh_/),
      ...registration,
      enabled: true,
      disabledReason: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(await json(await h.call('GET', `/api/webhooks/${endpoint.id}`))).not.toHaveProperty('secret');
  });

  it('events ["*"] is stored and returned as ["*"], on POST and PATCH', async () => {
    const h = await harness();
    const created = await json(await h.call('POST', '/api/webhooks', { json: { ...registration, events: ['*'] } }));
    expect(created.events).toEqual(['*']);
    expect((await json(await h.call('GET', `/api/webhooks/${created.id}`))).events).toEqual(['*']);
    const narrowed = await json(
      await h.call('PATCH', `/api/webhooks/${created.id}`, { json: { events: ['message.sent'] } }),
    );
    expect(narrowed.events).toEqual(['message.sent']);
    const widened = await json(await h.call('PATCH', `/api/webhooks/${created.id}`, { json: { events: ['*'] } }));
    expect(widened.events).toEqual(['*']);
  });

  it('POST with a secret of its own does not echo it', async () => {
    const h = await harness();
    const endpoint = await json(
      await h.call('POST', '/api/webhooks', { json: { ...registration, secret: 'a-raw-secret-of-20-chars' } }),
    );
    expect(endpoint).not.toHaveProperty('secret');
  });

  it('GET / lists page-numbered; GET /:id reads; PATCH returns the whole endpoint; DELETE 200', async () => {
    const h = await harness();
    const { secret: _secret, ...endpoint } = await json(await h.call('POST', '/api/webhooks', { json: registration }));
    expect(await json(await h.call('GET', '/api/webhooks'))).toEqual({
      webhooks: [endpoint],
      total: 1,
      page: 1,
      limit: 20,
    });
    expect(await json(await h.call('GET', `/api/webhooks/${endpoint.id}`))).toEqual(endpoint);
    const patched = await h.call('PATCH', `/api/webhooks/${endpoint.id}`, {
      json: { enabled: false, events: ['agent.deleted'] },
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toEqual({
      ...endpoint,
      enabled: false,
      events: ['agent.deleted'],
      updatedAt: expect.any(String),
    });
    const deleted = await h.call('DELETE', `/api/webhooks/${endpoint.id}`);
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ success: true, message: expect.stringContaining(endpoint.id) });
    expect((await h.call('GET', `/api/webhooks/${endpoint.id}`)).status).toBe(404);
  });

  it.each([
    [{ events: ['agent.created'] }, 'url'],
    [{ ...registration, url: 'ftp://example.com' }, 'url'],
    [{ ...registration, events: [] }, 'events'],
    [{ ...registration, events: ['agent.exploded'] }, 'events.0'],
    [{ ...registration, events: ['*', 'agent.created'] }, 'events'],
    [{ ...registration, secret: 'whsec_not base64!' }, 'secret'],
  ])('POST %j is 400 validation_failed', async (body, path) => {
    const h = await harness();
    const response = await h.call('POST', '/api/webhooks', { json: body });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
  });

  it("unknown ids and another workspace's endpoints are 404", async () => {
    const h = await harness();
    const endpoint = await json(await h.call('POST', '/api/webhooks', { json: registration }));
    expect((await h.call('GET', '/api/webhooks/wh_missing')).status).toBe(404);
    expect((await h.call('GET', `/api/webhooks/${endpoint.id}`, { key: h.otherKey })).status).toBe(404);
    expect(
      (await h.call('PATCH', `/api/webhooks/${endpoint.id}`, { key: h.otherKey, json: { enabled: false } })).status,
    ).toBe(404);
    expect((await h.call('DELETE', `/api/webhooks/${endpoint.id}`, { key: h.otherKey })).status).toBe(404);
  });

  it('private targets are 400 validation_failed at url, on POST and PATCH, echoing nothing; nothing changes', async () => {
    const resolver = new StaticHostResolver({ 'zq9-mark.internal.example': ['10.9.8.7'] });
    const h = await harness({}, memoryAdapters(), { hostResolver: resolver });
    for (const url of [
      'http://127.0.0.1:9000/zq9-mark',
      'http://[::1]/zq9-mark',
      'https://zq9-mark.internal.example/hooks',
    ]) {
      const response = await h.call('POST', '/api/webhooks', { json: { ...registration, url } });
      expect(response.status, url).toBe(400);
      const text = await response.text();
      expect(JSON.parse(text).error).toEqual({
        code: 'validation_failed',
        message: expect.stringContaining('Expected a public address'),
        details: { issues: [{ path: 'url', message: expect.stringMatching(/(loopback|private) address/) }] },
      });
      expect(text).not.toContain('zq9-mark');
    }
    expect(resolver.lookups).toEqual(['zq9-mark.internal.example']);
    expect(await json(await h.call('GET', '/api/webhooks'))).toMatchObject({ total: 0 });

    const { secret: _secret, ...endpoint } = await json(await h.call('POST', '/api/webhooks', { json: registration }));
    const patched = await h.call('PATCH', `/api/webhooks/${endpoint.id}`, {
      json: { url: 'http://169.254.169.254/latest/meta-data/' },
    });
    expect(patched.status).toBe(400);
    expect((await json(patched)).error.details.issues).toEqual([
      { path: 'url', message: expect.stringContaining('cloud metadata address') },
    ]);
    expect(await json(await h.call('GET', `/api/webhooks/${endpoint.id}`))).toEqual(endpoint);
  });

  it('private targets are accepted when the core allows them', async () => {
    const h = await harness({}, memoryAdapters(), { allowPrivateWebhookUrls: true });
    const response = await h.call('POST', '/api/webhooks', {
      json: { ...registration, url: 'http://localhost:4000/hooks' },
    });
    expect(response.status).toBe(201);
  });
});
