/**
 * @module Example (e) end to end: the page built by the example's own Vite config, served with
 * Parley behind it, driven in headless Chromium by role and name — a message typed and sent, the
 * reply seen while it streams and when done, and a reload mid-reply resuming it (`resume: true`).
 * The language model is a Chat Completions server on loopback that streams what the test says.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import { serve, type ServerHandle } from '@parley/http/server';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatServer } from './server.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];
const missing = !existsSync(CHROMIUM);
if (missing && !CI) {
  console.warn(
    `\n${'!'.repeat(78)}\n! SKIPPED: the useChat browser test. No Chromium at ${CHROMIUM}.\n` +
      `! Install it (apt-get install chromium) or set CHROMIUM_PATH. With CI=true it fails instead.\n${'!'.repeat(78)}\n`,
  );
}

/** One streamed answer: its text deltas; a delta after `holdBefore` waits for `hold`. */
interface Answer {
  deltas: string[];
  hold?: Promise<void>;
  holdBefore?: number;
}

/** A Chat Completions server on loopback streaming the answers queued in `answers`, in order. */
async function fakeModel() {
  const answers: Answer[] = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      for await (const _ of request);
      const answer = answers.shift() ?? { deltas: ['(nothing scripted)'] };
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (delta: object, finish: string | null = null) =>
        response.write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      send({ role: 'assistant', content: '' });
      for (const [index, content] of answer.deltas.entries()) {
        if (index === answer.holdBefore) await answer.hold;
        send({ content });
      }
      send({}, 'stop');
      response.end('data: [DONE]\n\n');
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, answers, server };
}

let model: Awaited<ReturnType<typeof fakeModel>>;
let core: Core;
let site: ServerHandle;
let browser: Browser | undefined;
const pageDir = mkdtempSync(join(tmpdir(), 'parley-use-chat-'));

beforeAll(async () => {
  model = await fakeModel();
  // The example's own build (vite.config.ts), written to a folder of this test.
  await build({
    configFile: fileURLToPath(new URL('../vite.config.ts', import.meta.url)),
    build: { outDir: pageDir },
    logLevel: 'warn',
  });
  core = createCore(memoryAdapters(), {
    models: { assistant: createOpenAICompatible({ name: 'fake', baseURL: model.baseURL }).chatModel('m') },
    workers: { relay: { pollMs: 50 }, replies: { pollMs: 50 } },
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const agent = await core.agents.create(
    { workspaceId: 'demo' },
    { name: 'Helper', description: '', model: 'assistant' },
  );
  site = await serve(createChatServer({ core, key, agentId: agent.id, pageDir }), { port: 0 });
  core.workers.start();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await core?.workers.stop();
  model?.server.close();
  rmSync(pageDir, { recursive: true, force: true });
});

describe.skipIf(missing && !CI)('the useChat page in headless Chromium', () => {
  it('sends a typed message and shows the reply as it streams, then whole; a reload mid-reply resumes it', async () => {
    if (missing) throw new Error(`CI=true needs Chromium at ${CHROMIUM} (or set CHROMIUM_PATH).`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${site.url}/`);

    let release!: () => void;
    model.answers.push({
      deltas: ['Blue light', ' scatters', ' most.'],
      holdBefore: 2,
      hold: new Promise<void>((resolve) => (release = resolve)),
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('Why is the sky blue?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByRole('article', { name: 'You' }).innerText(), { timeout: 30_000 })
      .toBe('Why is the sky blue?');
    const agent = page.getByRole('article', { name: 'Agent' });
    // Streaming: the first deltas are shown while the model has not written the rest.
    await expect.poll(() => agent.innerText(), { timeout: 30_000 }).toBe('Blue light scatters');
    release();
    await expect.poll(() => agent.innerText(), { timeout: 30_000 }).toBe('Blue light scatters most.');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isEnabled(), { timeout: 30_000 }).toBe(true);

    // A reload while a reply is being written: useChat's resume: true replays it from Parley.
    let resume!: () => void;
    model.answers.push({
      deltas: ['Because', ' of Rayleigh', ' scattering.'],
      holdBefore: 2,
      hold: new Promise<void>((resolve) => (resume = resolve)),
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('Why?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => agent.last().innerText(), { timeout: 30_000 }).toBe('Because of Rayleigh');
    // The model goes on once the page asked to resume, so the reply is still in progress then
    // (this page does not load the history: a reply finished before it asks is not shown).
    const resumed = page.waitForResponse((response) => /\/api\/chat\/[^/]+\/stream$/.test(response.url()), {
      timeout: 60_000,
    });
    await page.reload();
    expect((await resumed).status()).toBe(200);
    resume();
    await expect.poll(() => agent.last().innerText(), { timeout: 30_000 }).toBe('Because of Rayleigh scattering.');
    expect(errors).toEqual([]);
  }, 180_000);
});

it('runs as a program, answers a session and exits 0 on SIGTERM', async () => {
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { ...process.env, PORT: '0', MODEL_BASE_URL: model.baseURL },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Generous: tsx compiles the program and its imports first, slowly on a loaded machine.
  await expect.poll(() => output, { timeout: 45_000 }).toMatch(/Chat with the agent at (\S+)\//);
  const [, url] = /Chat with the agent at (\S+)\//.exec(output)!;
  const session = await fetch(`${url}/session`, { method: 'POST' });
  expect((await session.json()) as object).toMatchObject({ conversationId: expect.stringMatching(/^conv_/) });
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
}, 120_000);
