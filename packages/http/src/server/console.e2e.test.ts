/**
 * @module End to end: the web console (`/console/`) in headless Chromium against a real `parley
 * serve` process, on memory, Redis and PostgreSQL, with a fake Chat Completions server on loopback
 * that streams and asks for a webhook tool, and a real receiver answering that tool. Driven by role
 * and accessible name: sign in, create an agent whose tool needs approval, start a conversation,
 * send a message, approve the call, watch the reply stream, reload mid-stream (nothing twice), a
 * read-only key's disabled actions, XSS payloads that stay text, no console errors, no request
 * elsewhere, and axe-core on every page at 1280 × 800 and 390 px wide.
 * `UPDATE_SCREENSHOTS=1` writes docs/images/console-conversation.png (the README shows it);
 * otherwise the screenshot goes to `.artifacts/`.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { startReceiver, type Receiver } from '@parley/core/testing';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';
import { sharedBackends } from '../test-support/shared-backends.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const ROOT = new URL('../../../../', import.meta.url);
const ARTIFACTS = fileURLToPath(new URL('.artifacts/', ROOT));
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS
  ? fileURLToPath(new URL('docs/images/console-conversation.png', ROOT))
  : `${ARTIFACTS}console-conversation.png`;
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
    `\n${'!'.repeat(78)}\n! SKIPPED: the console browser tests. No Chromium at ${CHROMIUM}.\n` +
      `! Install it (apt-get install chromium) or set CHROMIUM_PATH. With CI=true they fail instead.\n${'!'.repeat(78)}\n`,
  );
}

const KEY = 'console-e2e-full-key-0001';
const READ_KEY = 'console-e2e-read-key-0001';
const XSS = '<img src=x onerror=window.__xss=1>';
const FINAL = 'It is sunny in Paris, 21 degrees: a fine day for a walk along the river.';
/** Long enough to watch: the test reloads the page after the first of these deltas. */
const FINAL_DELTAS = FINAL.split(/(?<= )/);
/** Generous: CI runs every file at once on a loaded machine. */
const WAIT = 60_000;

let browser: Browser | undefined;
async function launch(): Promise<Browser> {
  if (missing) throw new Error(`CI=true needs Chromium at ${CHROMIUM} (.ci/run installs it; or set CHROMIUM_PATH).`);
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return browser;
}
afterAll(async () => {
  await browser?.close();
});

/** A page on `origin` that records console errors, page errors and every request elsewhere (refused). */
async function openPage(origin: string, viewport = { width: 1280, height: 800 }) {
  const context: BrowserContext = await (await launch()).newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  const elsewhere: string[] = [];
  await page.route(
    (url) => url.origin !== origin,
    (route) => {
      elsewhere.push(route.request().url());
      return route.abort();
    },
  );
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.setDefaultTimeout(WAIT);
  return { context, page, problems, elsewhere };
}

async function signIn(page: Page, origin: string, key: string): Promise<void> {
  const response = await page.goto(`${origin}/`);
  expect(page.url()).toBe(`${origin}/console/`);
  expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** axe-core's serious and critical violations on the page as it is now, one line each. */
async function seriousViolations(page: Page, where: string): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${where}: ${violation.id} (${violation.impact}) at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}

/** What the payloads would set, were any of them run (expressions as text: this file has no DOM types). */
const XSS_FLAG = (page: Page) => page.evaluate('window.__xss');

const memory = {
  name: 'memory',
  describe,
  fresh: async (): Promise<Record<string, string>> => ({}),
  cleanup: async () => {},
};

for (const backend of [memory, ...(await sharedBackends())]) {
  const suite = missing && !CI ? describe.skip : backend.describe;
  suite(`the console on ${backend.name}, in Chromium`, () => {
    let fake: FakeOpenAi;
    let receiver: Receiver;
    let server: ServerProcess;
    let origin: string;
    /** Set by the first test: the conversation the others look at. */
    let conversationPath = '';
    let releaseFinal: () => void = () => {};

    beforeAll(async () => {
      fake = await startFakeOpenAi();
      receiver = await startReceiver();
      receiver.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ city: 'Paris', forecast: 'sunny', celsius: 21 }),
      });
      const paused = new Promise<void>((resolve) => (releaseFinal = resolve));
      // The first call asks for the tool (with an XSS payload in its arguments); the call after its
      // result streams the final answer, pausing after the first delta until the test has reloaded.
      fake.script((request) =>
        request.body.messages.some((message) => message.role === 'tool')
          ? { deltas: FINAL_DELTAS, delayMs: 40, pause: { afterDeltas: 1, until: paused } }
          : {
              deltas: ['Let me ', 'check ', 'the weather.'],
              delayMs: 40,
              toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: { city: `Paris ${XSS}` } }],
            },
      );
      server = await startServerProcess(
        {
          ...(await backend.fresh('console')),
          API_KEYS: JSON.stringify([
            { key: KEY, workspace: 'acme', plan: 'pro' },
            {
              key: READ_KEY,
              workspace: 'acme',
              plan: 'pro',
              scopes: ['agents:read', 'conversations:read', 'webhooks:read', 'events:read'],
            },
          ]),
          MODELS: JSON.stringify({
            'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' },
          }),
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        },
        'serve',
        [],
        { startTimeoutMs: 30_000 },
      );
      origin = server.base;
    }, 60_000);

    afterAll(async () => {
      releaseFinal();
      await server?.stop('SIGKILL');
      await fake?.close();
      await receiver?.close();
      await backend.cleanup();
    });

    it('signs in, creates an agent whose tool needs approval, streams a reply, approves the call, and a reload mid-stream shows nothing twice', async () => {
      const { context, page, problems, elsewhere } = await openPage(origin);
      try {
        await signIn(page, origin, KEY);
        await expect(page.getByText('acme', { exact: true }).first().isVisible()).resolves.toBe(true);
        await page.getByText(/requests left/).waitFor();

        // An agent with every setting, and a webhook tool that needs approval.
        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Agents' }).click();
        await page.getByText('No agents yet.', { exact: false }).waitFor();
        await page.getByRole('button', { name: 'New agent' }).click();
        await page.getByLabel('Name', { exact: true }).fill('Weather');
        await page.getByLabel('Description', { exact: true }).fill('Knows the weather');
        await page.getByLabel('Model', { exact: true }).fill('local-llm');
        await page.getByLabel('System prompt').fill('Be brief.');
        await page.getByLabel('Temperature').fill('0.2');
        await page.getByLabel('Max tokens').fill('300');
        await page.getByLabel('Max steps').fill('4');
        await page.getByLabel('Configuration (JSON)').fill(JSON.stringify({ units: 'metric' }));
        await page.getByRole('button', { name: 'Add tool' }).click();
        await page.getByLabel('Tool 1 name').fill('get_weather');
        await page.getByLabel('Tool 1 description').fill('The weather in a city');
        await page.getByLabel('Tool 1 URL').fill(receiver.url);
        await page.getByLabel('Tool 1 requires approval').check();
        await page
          .getByLabel('Tool 1 parameters (JSON Schema)')
          .fill(JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }));
        await page.getByRole('button', { name: 'Create agent' }).click();
        await page.getByRole('status').filter({ hasText: 'Created' }).waitFor();
        // Generated for the first webhook tool, shown once.
        await expect(page.getByLabel(/Tools secret/).inputValue()).resolves.toMatch(/^whsec_/);
        await expect(page.getByRole('heading', { name: 'Agent Weather' }).isVisible()).resolves.toBe(true);

        // A conversation with metadata carrying the payload too.
        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Conversations' }).click();
        await page.getByLabel('Agent of the new conversation').selectOption({ label: 'Weather' });
        await page.getByLabel('User id of the new conversation').fill('user_42');
        await page.getByLabel('Metadata (JSON)').fill(JSON.stringify({ topic: 'travel' }));
        await page.getByRole('button', { name: 'Start conversation' }).click();
        await page.getByRole('heading', { name: 'Conversation with Weather' }).waitFor();
        conversationPath = new URL(page.url()).hash;
        await page.getByText('live', { exact: true }).waitFor();

        // The message; the model asks for the tool, and the reply pauses for approval.
        await page.getByLabel('Message', { exact: true }).fill('What is the weather in Paris today?');
        await page.getByRole('button', { name: 'Send', exact: true }).click();
        const messages = page.getByRole('list', { name: 'Messages' });
        await messages
          .getByRole('listitem', { name: 'User message' })
          .filter({ hasText: 'weather in Paris' })
          .waitFor();
        const approve = page.getByRole('button', { name: 'Approve get_weather' });
        await approve.waitFor();
        const step = messages.getByRole('listitem', { name: 'Assistant message' }).filter({ hasText: 'Let me check' });
        await step.getByText('Tool call get_weather').click();
        await step.getByText(`"Paris ${XSS}"`, { exact: false }).waitFor();
        await step.getByText('Tool call get_weather').click();
        expect(receiver.received).toHaveLength(0);

        // Approved: Parley calls the tool, stores its result, and the final answer starts streaming.
        await approve.click();
        await page.getByRole('heading', { name: 'Tool calls waiting for an answer' }).waitFor({ state: 'detached' });
        await receiver.waitFor(1, WAIT);
        await messages.getByRole('listitem', { name: 'Tool result message' }).waitFor();
        const draft = messages.getByRole('listitem', { name: 'Reply being written' });
        await draft.filter({ hasText: FINAL_DELTAS[0]!.trim() }).waitFor();

        // Reloaded while the reply is held mid-stream: the tab keeps its session, the page its history.
        await page.reload();
        await page.getByRole('heading', { name: 'Conversation with Weather' }).waitFor();
        await page.getByText('live', { exact: true }).waitFor();
        await messages.getByRole('listitem', { name: 'Tool result message' }).waitFor();
        releaseFinal();
        const final = messages.getByRole('listitem', { name: 'Assistant message' }).filter({ hasText: FINAL });
        await final.waitFor();
        await draft.waitFor({ state: 'detached' });
        await final.getByText(/\d+ input, \d+ output tokens/).waitFor();

        // Each message once: the user's, the step asking for the tool, the tool's result, the answer.
        await expect.poll(() => messages.getByRole('listitem').count(), { timeout: WAIT }).toBe(4);
        await expect(final.count()).resolves.toBe(1);
        await expect(
          messages.getByRole('listitem', { name: 'User message' }).filter({ hasText: 'weather in Paris' }).count(),
        ).resolves.toBe(1);
        await messages.getByText('Result of get_weather').click();
        await messages.getByText(/"forecast": ?"sunny"/).waitFor();

        // The payload in the tool's arguments was text: shown as written, never run.
        await expect(XSS_FLAG(page)).resolves.toBeUndefined();
        await expect(page.locator('img[src="x"]').count()).resolves.toBe(0);

        if (backend.name === 'memory') {
          mkdirSync(dirname(SCREENSHOT), { recursive: true });
          await page.setViewportSize({ width: 1280, height: 1000 });
          await page.evaluate('window.scrollTo(0, 0)');
          await page.screenshot({ path: SCREENSHOT });
          console.log(`Screenshot of the conversation view: ${SCREENSHOT}`);
        }
        expect(problems).toEqual([]);
        expect(elsewhere).toEqual([]);
      } finally {
        await context.close();
      }
    }, 180_000);

    it('a read-only key (signed in with the keyboard) sees what its scopes forbid disabled, and why', async () => {
      expect(conversationPath).not.toBe('');
      const { context, page, problems, elsewhere } = await openPage(origin);
      try {
        await page.goto(`${origin}/console/`);
        await page.getByLabel('API key').waitFor();
        await page.keyboard.press('Tab');
        await expect(page.evaluate('document.activeElement.id')).resolves.toBe('api-key');
        await page.keyboard.type(READ_KEY);
        await page.keyboard.press('Enter');
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await expect(
          page
            .getByRole('row', { name: /agents:write/ })
            .getByText('not granted')
            .isVisible(),
        ).resolves.toBe(true);

        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Agents' }).click();
        const create = page.getByRole('button', { name: 'New agent' });
        await create.waitFor();
        await expect(create.isDisabled()).resolves.toBe(true);
        await expect(page.getByText('Your key lacks the agents:write scope.').first().isVisible()).resolves.toBe(true);
        await expect(page.getByRole('button', { name: 'Delete Weather' }).isDisabled()).resolves.toBe(true);

        await page.goto(`${origin}/console/${conversationPath}`);
        await page.getByRole('heading', { name: 'Conversation with Weather' }).waitFor();
        await page.getByRole('list', { name: 'Messages' }).getByText(FINAL).waitFor();
        for (const name of ['Send', 'Complete conversation', 'Delete conversation', 'Ask the agent to reply'])
          await expect(page.getByRole('button', { name, exact: true }).isDisabled()).resolves.toBe(true);
        await expect(page.getByLabel('Message', { exact: true }).isDisabled()).resolves.toBe(true);
        await expect(XSS_FLAG(page)).resolves.toBeUndefined();
        expect(problems).toEqual([]);
        expect(elsewhere).toEqual([]);
      } finally {
        await context.close();
      }
    }, 120_000);

    it('what users wrote — an agent name and description, conversation and message metadata, message content — stays text and never runs', async () => {
      const { context, page, problems, elsewhere } = await openPage(origin);
      try {
        await signIn(page, origin, KEY);
        await page.goto(`${origin}/console/#/agents/new`);
        await page.getByLabel('Name', { exact: true }).fill(`Ada ${XSS}`);
        await page.getByLabel('Description', { exact: true }).fill(XSS);
        await page.getByLabel('Model', { exact: true }).fill('local-llm');
        await page.getByLabel('Reply automatically to user messages').uncheck();
        await page.getByRole('button', { name: 'Create agent' }).click();
        await page.getByRole('heading', { name: `Agent Ada ${XSS}` }).waitFor();
        await page.goto(`${origin}/console/#/agents`);
        await page.getByRole('link', { name: `Ada ${XSS}` }).waitFor();
        await page.getByRole('cell').getByText(XSS, { exact: true }).waitFor();

        await page.goto(`${origin}/console/#/conversations`);
        await page.getByLabel('Agent of the new conversation').selectOption({ label: `Ada ${XSS}` });
        await page.getByLabel('Metadata (JSON)').fill(JSON.stringify({ topic: XSS }));
        await page.getByRole('button', { name: 'Start conversation' }).click();
        await page.getByRole('heading', { name: `Conversation with Ada ${XSS}` }).waitFor();
        await page.getByText('live', { exact: true }).waitFor();
        const conversationId = decodeURIComponent(new URL(page.url()).hash.split('/').pop()!);
        // Sent by another client, with metadata: it arrives on the live stream.
        const sent = await fetch(`${origin}/api/conversations/${conversationId}/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ role: 'user', content: `Hello ${XSS}`, metadata: { note: XSS } }),
        });
        expect(sent.status).toBe(201);
        const message = page
          .getByRole('list', { name: 'Messages' })
          .getByRole('listitem', { name: 'User message' })
          .filter({ hasText: 'Hello' });
        await message.getByText(`Hello ${XSS}`, { exact: true }).waitFor();
        await message.getByText('Metadata').click();
        await message.getByText(`"note": "${XSS}"`).waitFor();
        await page.getByText('Conversation metadata').click();
        await page.getByText(`"topic": "${XSS}"`).waitFor();

        await expect(XSS_FLAG(page)).resolves.toBeUndefined();
        await expect(page.locator('img[src="x"]').count()).resolves.toBe(0);
        expect(problems).toEqual([]);
        expect(elsewhere).toEqual([]);
      } finally {
        await context.close();
      }
    }, 120_000);

    /** Every page at `viewport`: axe-core's serious and critical violations, and overflow past the window. */
    async function audit(viewport: { width: number; height: number }): Promise<void> {
      expect(conversationPath).not.toBe('');
      const violations: string[] = [];
      const counts: string[] = [];
      const { context, page, problems, elsewhere } = await openPage(origin, viewport);
      try {
        const check = async (where: string) => {
          const found = await seriousViolations(page, `${where} at ${viewport.width} px`);
          violations.push(...found);
          const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
          if (overflow > 0) violations.push(`${where} at ${viewport.width} px: ${overflow} px wider than the window`);
          counts.push(`${where} ${found.length}`);
        };
        await page.goto(`${origin}/console/`);
        await page.getByLabel('API key').waitFor();
        await check('sign-in');
        await page.getByLabel('API key').fill(KEY);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await check('overview');
        const pages: Array<[string, string, () => Promise<unknown>]> = [
          ['agents', '#/agents', () => page.getByRole('table').waitFor()],
          ['agent', '#/agents/new', () => page.getByRole('button', { name: 'Add tool' }).waitFor()],
          ['conversations', '#/conversations', () => page.getByRole('table').waitFor()],
          ['conversation', conversationPath, () => page.getByText(FINAL).waitFor()],
          ['webhooks', '#/webhooks', () => page.getByText('No webhook endpoints yet.').waitFor()],
          ['events', '#/events', () => page.getByRole('list', { name: 'Events' }).waitFor()],
          ['usage', '#/usage', () => page.getByRole('img', { name: /tokens per day/ }).waitFor()],
        ];
        for (const [where, hash, ready] of pages) {
          await page.goto(`${origin}/console/${hash}`);
          await ready();
          await check(where);
        }
        expect(problems).toEqual([]);
        expect(elsewhere).toEqual([]);
      } finally {
        await context.close();
      }
      console.log(`axe-core serious or critical violations at ${viewport.width} px: ${counts.join(', ')}`);
      expect(violations).toEqual([]);
    }

    // The pages are the same on every backend: audited once. axe-core takes seconds per page on a
    // loaded machine, hence the long timeouts.
    if (backend.name === 'memory') {
      it(
        'every page: no serious or critical axe-core violation at 1280 × 800',
        () => audit({ width: 1280, height: 800 }),
        300_000,
      );
      it(
        'every page: no serious or critical axe-core violation on a 390 px-wide phone, and nothing wider than it',
        () => audit({ width: 390, height: 844 }),
        300_000,
      );
    }
  });
}
