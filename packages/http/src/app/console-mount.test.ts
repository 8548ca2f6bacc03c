/**
 * @module `createApp(core, { console: true })`: the built console at `/console/` (docs/console.md)
 * with its security headers and immutable assets, `/` redirected there (under a host's prefix
 * too), the page's scripts and styles from the same origin only; nothing of it without the option.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '@parley/console';
import { createCore } from '@parley/core';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createApp } from './app.js';

const app = (console: boolean) => createApp(createCore(memoryAdapters()), { logLevel: 'silent', console });

describe('the console in the app', () => {
  it('redirects / to /console/, which serves the built page with a strict CSP and its hashed assets', async () => {
    const parley = app(true);
    const root = await parley.request('/');
    expect(root.status).toBe(302);
    expect(root.headers.get('Location')).toBe('/console/');
    const page = await parley.request('/console/');
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Security-Policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(page.headers.get('X-Request-Id')).toBeTruthy();
    const html = await page.text();
    // No inline script: every script and style is a file of the console, relative to the page.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const response = await parley.request(`/console/${asset}`, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable');
      if (!asset.endsWith('.svg')) expect(response.headers.get('Content-Encoding')).toBe('gzip');
    }
  });

  it('under a prefix a host mounts Parley at, redirects to the console under that prefix', async () => {
    const host = new Hono().route('/agents-api', app(true));
    const root = await host.request('/agents-api');
    expect(root.headers.get('Location')).toBe('/agents-api/console/');
    expect((await host.request('/agents-api/console/')).status).toBe(200);
  });

  it('is not there without the option', async () => {
    const parley = app(false);
    expect((await parley.request('/')).status).toBe(404);
    expect((await parley.request('/console/')).status).toBe(404);
  });
});
