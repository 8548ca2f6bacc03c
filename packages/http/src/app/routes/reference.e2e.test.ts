/**
 * @module End to end: `/docs` rendered by headless Chromium from a listening server, with every
 * byte from that server, at the root and under a host's prefix; screenshots go to `.artifacts/`.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { Hono } from 'hono';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { serve, type ServerHandle } from '../../server/serve.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const ARTIFACTS = fileURLToPath(new URL('../../../../../.artifacts/', import.meta.url));
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const missing = !existsSync(CHROMIUM);
if (missing && !CI) {
  console.warn(
    `\n${'!'.repeat(78)}\n! SKIPPED: the /docs browser tests. No Chromium at ${CHROMIUM}.\n` +
      `! Install it (apt-get install chromium) or set CHROMIUM_PATH. With CI=true they fail instead.\n${'!'.repeat(78)}\n`,
  );
}

const servers: ServerHandle[] = [];
let browser: Browser | undefined;

async function launch(): Promise<Browser> {
  if (missing) throw new Error(`CI=true needs Chromium at ${CHROMIUM} (.ci/run installs it; or set CHROMIUM_PATH).`);
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return browser;
}

/** Serves `app` and opens `path` on it; requests to anywhere else are refused and recorded. */
async function open(app: { fetch: (request: Request) => Response | Promise<Response> }, path: string) {
  const server = await serve(app, { port: 0 });
  servers.push(server);
  const page = await (await launch()).newPage({ viewport: { width: 1440, height: 960 } });
  const elsewhere: string[] = [];
  const errors: string[] = [];
  await page.route(
    (url) => url.origin !== server.url && url.protocol !== 'data:' && url.protocol !== 'blob:',
    (route) => {
      elsewhere.push(route.request().url());
      return route.abort();
    },
  );
  page.on('pageerror', (error) => errors.push(error.message));
  // Scalar checks the document as it loads and warns about what it cannot read.
  page.on('console', (message) => {
    if (/validation/i.test(message.text()))
      void Promise.all(message.args().map((arg) => arg.jsonValue().catch(() => '?'))).then((values) =>
        errors.push(`${message.text()} ${JSON.stringify(values)}`),
      );
  });
  const response = await page.goto(`${server.url}${path}`, { waitUntil: 'domcontentloaded' });
  expect(response?.status()).toBe(200);
  return { page, elsewhere, errors, origin: server.url };
}

const heading = (page: Page, name: string) => page.getByRole('heading', { name, exact: true }).first();

/** Picks the operation `summary` in the sidebar and waits for its section's heading. */
async function show(page: Page, summary: string): Promise<void> {
  const entry = page.getByRole('complementary').getByText(summary, { exact: true }).first();
  await entry.click({ timeout: 90_000 });
  await heading(page, summary).waitFor({ state: 'visible', timeout: 30_000 });
}

afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((server) => server.close()));
});

describe.skipIf(missing && !CI)('GET /docs in headless Chromium', () => {
  it('renders every operation of /openapi.json without loading anything from elsewhere', async () => {
    const { page, elsewhere, errors, origin } = await open(
      createApp(createCore(memoryAdapters()), { logLevel: 'silent' }),
      '/docs',
    );
    // The page has rendered the document once every operation's summary shows as a heading. Scalar
    // renders sections as they scroll into view, so each one is reached through the sidebar.
    const document = (await (await fetch(`${origin}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const summaries = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.summary));
    expect(summaries.length).toBeGreaterThanOrEqual(24);
    const screenshots = [`${ARTIFACTS}reference-page.png`, `${ARTIFACTS}reference-operation.png`];
    try {
      await expect(page.title()).resolves.toBe('Parley API reference');
      for (const summary of summaries) await show(page, summary);
    } finally {
      // Also when rendering failed: the pictures show how.
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: screenshots[0] });
      await show(page, 'Create an agent').catch(() => {});
      await page.screenshot({ path: screenshots[1] });
      console.log(`Screenshots of /docs:\n  ${screenshots.join('\n  ')}`);
    }
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  }, 240_000);

  it('renders under the prefix a host mounts Parley at, with the prefix as the server', async () => {
    const host = new Hono().route('/agents-api', createApp(createCore(memoryAdapters()), { logLevel: 'silent' }));
    const { page, elsewhere, errors, origin } = await open(host, '/agents-api/docs');
    await show(page, 'Get the message history');
    await expect(page.getByText(`${origin}/agents-api`, { exact: true }).first().isVisible()).resolves.toBe(true);
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  }, 240_000);
});
