/**
 * @module The host app of docs/embedding.md, run as written: Parley mounted in a Hono app delivers
 * a webhook to a receiver on loopback (its workers run), and SIGTERM drains and exits 0.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReceiver } from '@parley/core/testing';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The page's first TypeScript block: the mounted host. */
function hostSource(): string {
  const page = readFileSync(join(root, 'docs/embedding.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(page);
  if (!block) throw new Error('docs/embedding.md has no ```ts block');
  return block[1]!;
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

it('delivers a webhook to a receiver on loopback, then exits 0 on SIGTERM', async () => {
  // Inside the repository, so `@parley/*` and `hono` resolve from its node_modules as after an install.
  const folder = mkdtempSync(join(root, 'test/.embedding-'));
  const receiver = await startReceiver();
  writeFileSync(join(folder, 'host.mts'), hostSource());
  const env = { ...process.env, PORT: String(await freePort()), WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
  const child = spawn(process.execPath, ['--import', 'tsx', join(folder, 'host.mts')], { cwd: root, env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const curl = /curl -H "Authorization: Bearer (\S+)" (\S+)\/api\/agents/;
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(curl);
    const [, key, base] = curl.exec(output)!;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const post = (path: string, body: object) =>
      fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    expect((await post('/api/webhooks', { url: receiver.url, events: ['agent.created'] })).status).toBe(201);
    const agent = (await (await post('/api/agents', { name: 'Ada', description: '', model: 'modelA-4' })).json()) as {
      id: string;
    };
    await receiver.waitFor(1, 10_000);
    expect(receiver.received[0]!.json).toMatchObject({ type: 'agent.created', data: { id: agent.id } });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
    await receiver.close();
    rmSync(folder, { recursive: true, force: true });
  }
}, 40_000);
