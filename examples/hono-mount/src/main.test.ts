/** @module Example (b): every part of Parley works under the host's `/agents-api` prefix, and the host's routes still do. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createParleyClient } from '@parley/client';
import { createCore } from '@parley/core';
import { serve } from '@parley/http/server';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { createHostApp } from './main.js';

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
  expect(await (await host.request('/agents-api/api/nothing', auth)).json()).toMatchObject({ error: { code: 'not_found' } });
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

it('runs as a program and exits 0 on SIGTERM', async () => {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  probe.close();
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await expect.poll(() => output, { timeout: 15_000 }).toContain('curl -H');
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
}, 20_000);
