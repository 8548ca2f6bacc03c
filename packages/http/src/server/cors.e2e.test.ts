/**
 * @module End to end: a page in headless Chromium, served from one loopback port, calls the API
 * listening on another (a different origin), with and without `corsOrigins`.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { Hono } from 'hono';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, type AppOptions } from '../app/app.js';
import { serve, type ServerHandle } from './serve.js';
import { captureLogs } from '../test-support/harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const missing = !existsSync(CHROMIUM);
if (missing && !CI) {
  console.warn(
    `\n${'!'.repeat(78)}\n! SKIPPED: the CORS browser tests. No Chromium at ${CHROMIUM}.\n` +
      `! Install it (apt-get install chromium) or set CHROMIUM_PATH. With CI=true they fail instead.\n${'!'.repeat(78)}\n`,
  );
}

const servers: ServerHandle[] = [];
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((server) => server.close()));
});

/** What the page reports after calling the API. */
interface PageOutcome {
  created?: { status: number; name: string; rateLimit: string | null; requestId: string | null };
  missing?: { status: number; code: string };
  error?: string;
}

/**
 * Starts the API with `cors` and a page server on another port, opens the page in Chromium and
 * lets it create an agent (a JSON POST with a bearer key: the browser preflights it) and read a
 * 404. Returns what the page saw, the page's origin and the API's request log.
 */
async function callFromPage(cors: (pageOrigin: string) => AppOptions['corsOrigins']) {
  if (missing) throw new Error(`CI=true needs Chromium at ${CHROMIUM} (.ci/run installs it; or set CHROMIUM_PATH).`);
  const pageServer = await serve(
    new Hono().get('/', (c) => c.html('<!doctype html><title>host page</title>')),
    { port: 0 },
  );
  servers.push(pageServer);
  const core = createCore(memoryAdapters());
  const { key } = await core.apiKeys.issue({ workspaceId: 'ws', plan: 'pro' });
  const { logger, lines } = captureLogs();
  const corsOrigins = cors(pageServer.url);
  const api = await serve(createApp(core, { logger, ...(corsOrigins && { corsOrigins }) }), { port: 0 });
  servers.push(api);
  expect(new URL(api.url).origin).not.toBe(new URL(pageServer.url).origin);

  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  const page = await browser.newPage();
  try {
    await page.goto(pageServer.url);
    const outcome = await page.evaluate(
      async ({ base, key }): Promise<PageOutcome> => {
        try {
          const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
          const body = JSON.stringify({ name: 'From the browser', description: 'CORS', model: 'modelA-4' });
          const created = await fetch(`${base}/api/agents`, { method: 'POST', headers, body });
          const agent = (await created.json()) as { name: string };
          const missing = await fetch(`${base}/api/agents/agt_missing`, { headers });
          const error = (await missing.json()) as { error: { code: string } };
          return {
            created: {
              status: created.status,
              name: agent.name,
              rateLimit: created.headers.get('RateLimit'),
              requestId: created.headers.get('X-Request-Id'),
            },
            missing: { status: missing.status, code: error.error.code },
          };
        } catch (error) {
          return { error: String(error) };
        }
      },
      { base: api.url, key },
    );
    return { outcome, pageOrigin: pageServer.url, log: lines, core };
  } finally {
    await page.close();
  }
}

describe.skipIf(missing && !CI)('CORS in headless Chromium (page and API on different ports)', () => {
  it('lets an allowed origin call the API: preflight without a key, then the request with it', async () => {
    const { outcome, log } = await callFromPage((pageOrigin) => [pageOrigin]);
    expect(outcome).toEqual({
      created: {
        status: 201,
        name: 'From the browser',
        rateLimit: expect.stringMatching(/^"pro";r=\d+;t=\d+$/),
        requestId: expect.any(String),
      },
      missing: { status: 404, code: 'not_found' },
    });
    const requests = log
      .filter((line) => line.msg === 'request')
      .map((line) => `${line.method} ${line.path} ${line.status}`);
    expect(requests).toContain('OPTIONS /api/agents 204');
    expect(requests).toContain('POST /api/agents 201');
  });

  it("lets any origin call with '*'", async () => {
    const { outcome } = await callFromPage(() => '*');
    expect(outcome.created?.status).toBe(201);
  });

  it('blocks a page whose origin is not listed, and one calling a server without CORS', async () => {
    for (const cors of [() => ['http://127.0.0.1:1'], () => undefined]) {
      const { outcome, core } = await callFromPage(cors);
      expect(outcome).toEqual({ error: expect.stringMatching(/TypeError: Failed to fetch/) });
      // The preflight failed, so the POST was never sent.
      expect((await core.agents.list({ workspaceId: 'ws' }, {})).total).toBe(0);
    }
  });
});
