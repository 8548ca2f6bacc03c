/** @module Example (c): a node:http server answers its own route and passes Parley's through, bodies and errors included. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startReceiver } from '@parley/core/testing';
import { expect, it } from 'vitest';
import { createHostServer } from './main.js';

it('serves its own route and Parley behind getRequestListener', async () => {
  const core = createCore(memoryAdapters());
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const server = createHostServer(core).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    expect(await (await fetch(url)).text()).toBe('My product');
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${url}/api/agents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Ada', description: '', model: 'modelA-4' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('RateLimit-Policy')).toBe('"pro";q=1000;w=3600');
    const unauthorized = await fetch(`${url}/api/agents`);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
  } finally {
    server.closeAllConnections();
    server.close();
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
  const curl = /curl -H "Authorization: Bearer (\S+)" (\S+)\/api\/agents/;
  await expect.poll(() => output, { timeout: 15_000 }).toMatch(curl);
  const [, key, baseUrl] = curl.exec(output)!;
  const stop = () => (child.kill('SIGTERM'), exited);
  return { key: key!, baseUrl: baseUrl!, stop };
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
    const headers = { Authorization: `Bearer ${program.key}`, 'Content-Type': 'application/json' };
    const post = (path: string, body: object) =>
      fetch(`${program.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    expect((await post('/api/webhooks', { url: receiver.url, events: ['agent.created'] })).status).toBe(201);
    const agent = (await (await post('/api/agents', { name: 'Ada', description: '', model: 'modelA-4' })).json()) as {
      id: string;
    };
    await receiver.waitFor(1, 10_000);
    expect(receiver.received[0]!.json).toMatchObject({ type: 'agent.created', data: { id: agent.id } });
    expect(await program.stop()).toBe(0);
  } finally {
    await program.stop();
    await receiver.close();
  }
}, 30_000);
