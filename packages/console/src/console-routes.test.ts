/**
 * @module `consoleRoutes()` over a built app of its own (a temporary folder): the page, hashed
 * assets cached for a year, compression by `Accept-Encoding`, revalidation, the redirect to the
 * trailing slash, 404 for anything else, 503 when nothing is built — each with the strict CSP.
 */
import { Hono } from 'hono';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CONSOLE_CONTENT_SECURITY_POLICY, consoleRoutes } from './index.js';

const directory = mkdtempSync(join(tmpdir(), 'parley-console-'));
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;
const PAGE = '<!doctype html><html><head><script type="module" src="./assets/index-AbC123.js"></script></head></html>';
mkdirSync(join(directory, 'assets'));
writeFileSync(join(directory, 'index.html'), PAGE);
writeFileSync(join(directory, 'assets', 'index-AbC123.js'), SCRIPT);
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const host = new Hono().route('/console', consoleRoutes({ directory }));
const get = (path: string, headers: Record<string, string> = {}) => host.request(path, { headers });

function expectSecurityHeaders(response: Response) {
  expect(response.headers.get('Content-Security-Policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  expect(response.headers.get('X-Content-Type-Options')).toBe('nosniff');
  expect(response.headers.get('X-Frame-Options')).toBe('DENY');
}

describe('consoleRoutes', () => {
  it('the policy allows nothing from elsewhere, no inline script, and no framing', () => {
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toContain("script-src 'self';");
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
  });

  it('redirects the mount point to its trailing slash, keeping the query', async () => {
    const response = await get('/console?x=1');
    expect(response.status).toBe(308);
    expect(response.headers.get('Location')).toBe('/console/?x=1');
  });

  it('serves the page uncached but revalidated by ETag', async () => {
    const response = await get('/console/');
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('Cache-Control')).toBe('no-cache');
    expectSecurityHeaders(response);
    expect(await response.text()).toBe(PAGE);
    const etag = response.headers.get('ETag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get('/console/', { 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('serves hashed assets for a year, compressed as the client accepts', async () => {
    const plain = await get('/console/assets/index-AbC123.js');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('Content-Type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('Content-Encoding')).toBeNull();
    expect(plain.headers.get('Vary')).toBe('Accept-Encoding');
    expectSecurityHeaders(plain);
    expect(await plain.text()).toBe(SCRIPT);

    const br = await get('/console/assets/index-AbC123.js', { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(br.headers.get('Content-Encoding')).toBe('br');
    const brBytes = Buffer.from(await br.arrayBuffer());
    expect(brBytes.length).toBeLessThan(SCRIPT.length / 10);
    expect(brotliDecompressSync(brBytes).toString()).toBe(SCRIPT);

    const gzip = await get('/console/assets/index-AbC123.js', { 'Accept-Encoding': 'gzip, br;q=0' });
    expect(gzip.headers.get('Content-Encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString()).toBe(SCRIPT);
  });

  it('answers 404 for anything else, never a file outside the app', async () => {
    for (const path of [
      '/console/assets/missing.js',
      '/console/assets/..%2Findex.html',
      '/console/assets/%2e%2e/index.html',
      '/console/index.html.map',
      '/console/assets/',
      '/console/agents/',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expectSecurityHeaders(response);
    }
  });

  it('at the root of a host, or under a prefix, serves the page without a redirect loop', async () => {
    const root = new Hono().route('/', consoleRoutes({ directory }));
    expect(await (await root.request('/')).text()).toBe(PAGE);
    expect((await root.request('/assets/index-AbC123.js')).status).toBe(200);
    const prefixed = new Hono().route('/agents-api', new Hono().route('/console', consoleRoutes({ directory })));
    expect((await prefixed.request('/agents-api/console')).headers.get('Location')).toBe('/agents-api/console/');
    expect(await (await prefixed.request('/agents-api/console/')).text()).toBe(PAGE);
  });

  it('says the app is not built when its folder is missing', async () => {
    const missing = new Hono().route('/console', consoleRoutes({ directory: join(directory, 'nowhere') }));
    const response = await missing.request('/console/');
    expect(response.status).toBe(503);
    expect(await response.text()).toMatch(/not built/);
    expectSecurityHeaders(response);
  });
});
