/** @module JSON compression: over 1 KiB and only when asked, through `app.request()` and a real listening server. */
import { gunzipSync, inflateSync } from 'node:zlib';
import { request } from 'node:http';
import { ErrorCode, ParleyError } from '@parley/core';
import { Hono, type Context } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import type { ParleyEnv } from '../env.js';
import { json } from '../response.js';
import { serve, type ServerHandle } from '../../server/serve.js';
import { captureLogs, harness, json as bodyOf } from '../../test-support/harness.js';
import { compressJsonResponse } from './compress-json.js';
import { errorHandler } from './error-handler.js';

const servers: ServerHandle[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

/** A GET over a real socket with `headers`, returning the raw (undecoded) body bytes. */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * A request from a client that accepts gzip, whose response `build` makes and `compressJsonResponse`
 * then sees: the response built, the one left to send, and the one the app answered.
 */
async function compressedFor(build: (c: Context<ParleyEnv>) => Response | Promise<Response>) {
  let built: Response | undefined;
  let sent: Response | undefined;
  const app = new Hono<ParleyEnv>().get('/', async (c) => {
    c.res = built = await build(c);
    await compressJsonResponse(c);
    return (sent = c.res);
  });
  const response = await app.request('/', { headers: { 'Accept-Encoding': 'gzip' } });
  return { built, sent, response };
}

describe('JSON compression', () => {
  it('gzips /openapi.json for a client that accepts gzip, and the bytes inflate to the same document', async () => {
    const h = await harness();
    const plain = await h.app.request('/openapi.json');
    const text = await plain.text();
    expect(plain.headers.get('Content-Encoding')).toBeNull();
    expect(text.length).toBeGreaterThan(50_000);

    const server = await serve(h.app, { port: 0 });
    servers.push(server);
    const gzipped = await rawGet(`${server.url}/openapi.json`, { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['vary']).toMatch(/Accept-Encoding/i);
    expect(gzipped.body.length).toBeLessThan(text.length / 4);
    expect(gunzipSync(gzipped.body).toString('utf8')).toBe(text);

    const deflated = await rawGet(`${server.url}/openapi.json`, { 'Accept-Encoding': 'deflate' });
    expect(deflated.headers['content-encoding']).toBe('deflate');
    expect(inflateSync(deflated.body).toString('utf8')).toBe(text);

    const identity = await rawGet(`${server.url}/openapi.json`, {});
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.toString('utf8')).toBe(text);
  });

  it('leaves JSON under 1 KiB alone, even when the client accepts gzip', async () => {
    const h = await harness();
    const response = await h.app.request('/healthz', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(response.headers.get('Content-Encoding')).toBeNull();
    expect(await response.json()).toMatchObject({ status: 'ok' });
    expect(Number(response.headers.get('Content-Length'))).toBeLessThan(1024);
  });

  it('sends a small body a route built from a string as it was built, without reading it back', async () => {
    const { built, sent, response } = await compressedFor((c) => json(c, { status: 'ok' }));
    expect(sent).toBe(built);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('sends a small error response as it was built too (a refusal costs no copy)', async () => {
    const renderError = errorHandler({ logger: captureLogs().logger });
    const refusal = new ParleyError(ErrorCode.rateLimitExceeded, 'Rate limit exceeded.', { retryAfterSeconds: 2 });
    const { built, sent, response } = await compressedFor(async (c) => renderError(refusal, c));
    expect(sent).toBe(built);
    expect(response.status).toBe(429);
    expect(response.headers.get('Content-Type')).toBe('application/json');
    expect(await response.json()).toEqual({
      error: { code: 'rate_limit_exceeded', message: 'Rate limit exceeded.', details: { retryAfterSeconds: 2 } },
    });
  });

  it('sizes a body by its UTF-8 bytes: under 1 024 characters but over 1 KiB is compressed', async () => {
    const h = await harness();
    const small = await bodyOf<{ id: string }>(
      await h.call('POST', '/api/agents', { json: { name: 'Plain', description: 'x', model: 'modelA-4' } }),
    );
    const wide = await bodyOf<{ id: string }>(
      await h.call('POST', '/api/agents', { json: { name: 'Wide', description: '€'.repeat(400), model: 'modelA-4' } }),
    );
    const plain = await h.call('GET', `/api/agents/${small.id}`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(plain.headers.get('Content-Encoding')).toBeNull();
    expect(await plain.json()).toEqual(small);
    const compressed = await h.call('GET', `/api/agents/${wide.id}`, { headers: { 'Accept-Encoding': 'gzip' } });
    const text = JSON.stringify(wide);
    expect(text.length).toBeLessThan(1024);
    expect(new TextEncoder().encode(text).length).toBeGreaterThan(1024);
    expect(compressed.headers.get('Content-Encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.from(await compressed.arrayBuffer())).toString('utf8')).toBe(text);
  });

  it('compresses a large API list and an error alike; a small error stays plain', async () => {
    const h = await harness();
    for (let i = 0; i < 20; i += 1) {
      await h.call('POST', '/api/agents', {
        json: { name: `Agent ${i}`, description: 'x'.repeat(100), model: 'modelA-4' },
      });
    }
    const list = await h.call('GET', '/api/agents?limit=20', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(list.headers.get('Content-Encoding')).toBe('gzip');
    const missing = await h.call('GET', '/api/agents/agt_missing', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('Content-Encoding')).toBeNull();
  });

  it('can be turned off (compression: false)', async () => {
    const h = await harness({ compression: false });
    const response = await h.app.request('/openapi.json', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(response.headers.get('Content-Encoding')).toBeNull();
  });
});
