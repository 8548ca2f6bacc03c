/** @module Example (b): every part of Parley works under the host's `/agents-api` prefix, and the host's routes still do. */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { memoryAdapters } from '@parley/adapter-memory';
import { createParleyClient } from '@parley/client';
import { createCore } from '@parley/core';
import { serve } from '@parley/http/server';
import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startReceiver } from '@parley/core/testing';
import { expect, it } from 'vitest';
import { createHostApp, startHost } from './main.js';

it('serves the API, the sandbox, the probes, the document and the page under /agents-api', async () => {
  const core = createCore(memoryAdapters());
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const host = createHostApp(core);
  const auth = { headers: { Authorization: `Bearer ${key}` } };

  expect(await (await host.request('/')).text()).toBe('My product');
  expect((await host.request('/agents-api/api/agents', auth)).status).toBe(200);
  expect((await host.request('/agents-api/sandbox/plants', auth)).status).toBe(200);
  expect((await host.request('/agents-api/healthz')).status).toBe(200);
  // Parley's own 404s keep their shape under the prefix; the root API is not also served.
  expect(await (await host.request('/agents-api/api/nothing', auth)).json()).toMatchObject({
    error: { code: 'not_found' },
  });
  expect((await host.request('/api/agents', auth)).status).toBe(404);

  const document = (await (await host.request('/agents-api/openapi.json')).json()) as { servers: unknown };
  expect(document.servers).toEqual([{ url: '/agents-api', description: 'This server' }]);
  const page = await (await host.request('/agents-api/docs')).text();
  // Relative URLs: from /agents-api/docs they resolve to /agents-api/openapi.json and /agents-api/docs/assets/….
  expect(page).toContain('"url": "openapi.json"');
  expect(page).toContain('src="docs/assets/scalar-api-reference.js"');
  expect((await host.request('/agents-api/docs/assets/scalar-api-reference.js')).status).toBe(200);
});

it('is reached by @parley/client with the prefix in its base URL', async () => {
  const core = createCore(memoryAdapters());
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const server = await serve(createHostApp(core), { port: 0 });
  try {
    const parley = createParleyClient({ baseUrl: `${server.url}/agents-api`, apiKey: key });
    const agent = await parley.agents.create({ name: 'Ada', description: '', model: 'modelA-4' });
    expect((await parley.agents.list()).agents).toEqual([agent]);
  } finally {
    await server.close();
  }
});

/** Runs `main.ts` on a free port until it prints its curl line; `stop()` sends SIGTERM, resolves with the exit code. */
async function runProgram(env: Record<string, string> = {}) {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  probe.close();
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await expect
    .poll(() => output, { timeout: 15_000 })
    .toMatch(/curl -H "Authorization: Bearer (\S+)" (\S+)\/api\/agents/);
  const [, key, baseUrl] = /curl -H "Authorization: Bearer (\S+)" (\S+)\/api\/agents/.exec(output)!;
  const stop = () => (child.kill('SIGTERM'), exited);
  return { key: key!, baseUrl: baseUrl!, output: () => output, stop };
}

it('runs as a program and exits 0 on SIGTERM', async () => {
  const program = await runProgram();
  expect(await program.stop()).toBe(0);
}, 20_000);

it('as a program, delivers a webhook to a receiver on loopback, then exits 0 on SIGTERM', async () => {
  const receiver = await startReceiver();
  // Loopback receivers are refused unless allowed, as with `parley serve`.
  const program = await runProgram({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  try {
    const parley = createParleyClient({ baseUrl: program.baseUrl, apiKey: program.key });
    await parley.webhooks.create({ url: receiver.url, events: ['agent.created'] });
    const agent = await parley.agents.create({ name: 'Ada', description: '', model: 'modelA-4' });
    await receiver.waitFor(1, 10_000);
    expect(receiver.received[0]!.json).toMatchObject({ type: 'agent.created', data: { id: agent.id } });
    expect(await program.stop()).toBe(0);
  } finally {
    await program.stop();
    await receiver.close();
  }
}, 30_000);

/** A model provider on loopback speaking the Chat Completions API: every answer streams `text`. */
async function startFakeChatCompletions(text: string) {
  const server = createHttpServer((request, response) => {
    request.resume().once('end', () => {
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'fake',
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      response.end(`${chunk({ role: 'assistant', content: text }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`);
    });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

it('makes agent replies once started: an agent whose model is configured answers a user message', async () => {
  const provider = await startFakeChatCompletions('Refunds take 5 days.');
  const model = createOpenAICompatible({ name: 'fake', baseURL: provider.baseURL }).chatModel('fake-model');
  const core = createCore(memoryAdapters(), { models: { helper: model } });
  const host = await startHost(core, 0);
  try {
    const agent = await core.agents.create(
      { workspaceId: 'demo' },
      { name: 'Helpdesk', description: '', model: 'helper' },
    );
    const conversation = await core.conversations.create({ workspaceId: 'demo' }, { agentId: agent.id, userId: 'u1' });
    await core.conversations.sendMessage({ workspaceId: 'demo' }, conversation.id, {
      role: 'user',
      content: 'When is my refund?',
    });
    await expect
      .poll(
        async () =>
          (await core.conversations.history({ workspaceId: 'demo' }, conversation.id, {})).messages.map(
            (message) => message.content,
          ),
        { timeout: 10_000 },
      )
      .toEqual(['When is my refund?', 'Refunds take 5 days.']);
  } finally {
    await host.close();
    await provider.close();
  }
});
