/**
 * @module End to end: `/docs` rendered by headless Chromium from a listening server, with every
 * byte from that server, and a screenshot under `.artifacts/` for people to look at.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { serve, type ServerHandle } from '../serve.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const ARTIFACTS = fileURLToPath(new URL('../../../../.artifacts/', import.meta.url));

const missing = !existsSync(CHROMIUM);
if (missing && !CI) {
  console.warn(
    `\n${'!'.repeat(78)}\n! SKIPPED: the /docs browser test. No Chromium at ${CHROMIUM}.\n` +
      `! Install it (apt-get install chromium) or set CHROMIUM_PATH. With CI=true this fails instead.\n${'!'.repeat(78)}\n`,
  );
}

describe('GET /docs in headless Chromium', () => {
  let server: ServerHandle | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it.skipIf(missing && !CI)('renders the operations of /openapi.json without loading anything from elsewhere', async () => {
    if (missing) throw new Error(`CI=true needs Chromium at ${CHROMIUM} (the CI script installs it; or set CHROMIUM_PATH).`);
    server = await serve(createApp(createCore(memoryAdapters()), { logLevel: 'silent' }), { port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = await browser.newPage({ viewport: { width: 1440, height: 960 } });
    const origin = server.url;
    const elsewhere: string[] = [];
    const errors: string[] = [];
    // Anything not from our server is refused and recorded: the page must not need a CDN.
    await page.route(
      (url) => url.origin !== origin && url.protocol !== 'data:' && url.protocol !== 'blob:',
      (route) => {
        elsewhere.push(route.request().url());
        return route.abort();
      },
    );
    page.on('pageerror', (error) => errors.push(error.message));
    // Scalar checks the document as it loads and warns about what it cannot read.
    page.on('console', (message) => {
      if (/validation/i.test(message.text())) errors.push(message.text());
    });

    // The page has rendered the document once every operation's summary shows as a heading.
    const document = (await (await fetch(`${origin}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
    const summaries = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.summary));
    expect(summaries.length).toBeGreaterThanOrEqual(24);
    const screenshots = [`${ARTIFACTS}reference-page.png`, `${ARTIFACTS}reference-operation.png`];
    try {
      const response = await page.goto(`${origin}/docs`, { waitUntil: 'domcontentloaded' });
      expect(response?.status()).toBe(200);
      await expect(page.title()).resolves.toBe('Parley API reference');
      for (const summary of summaries) {
        await page.getByRole('heading', { name: summary, exact: true }).first().waitFor({ state: 'visible', timeout: 30_000 });
      }
    } finally {
      // Also when rendering failed: the pictures show how.
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: screenshots[0] });
      await page.getByRole('heading', { name: 'Create an agent', exact: true }).first().scrollIntoViewIfNeeded({ timeout: 5_000 }).catch(() => {});
      await page.screenshot({ path: screenshots[1] });
      console.log(`Screenshots of /docs:\n  ${screenshots.join('\n  ')}`);
    }
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  }, 90_000);
});
