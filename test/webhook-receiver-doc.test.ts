/** @module The plain-JavaScript receiver of docs/webhooks.md, run as written with Node: it accepts Parley-signed requests and refuses forged ones. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const secret = `whsec_${Buffer.from('a test secret of 32 bytes, ok!!!').toString('base64')}`;

function receiverSource(): string {
  const page = readFileSync(join(root, 'docs/webhooks.md'), 'utf8');
  const block = /```js\n(\/\/ receiver\.mjs\n[\s\S]*?)```/.exec(page);
  if (!block) throw new Error('docs/webhooks.md has no ```js block starting with // receiver.mjs');
  return block[1]!;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the plain-JavaScript webhook receiver in docs/webhooks.md', () => {
  let child: ChildProcess;
  let url: string;
  let output = '';
  // Inside the repository, so `standardwebhooks` resolves from its node_modules as after an install.
  const folder = mkdtempSync(join(root, 'test/.receiver-'));

  beforeAll(async () => {
    writeFileSync(join(folder, 'receiver.mjs'), receiverSource());
    const port = await freePort();
    url = `http://127.0.0.1:${port}/`;
    child = spawn(process.execPath, [join(folder, 'receiver.mjs')], {
      env: { ...process.env, PORT: String(port), PARLEY_WEBHOOK_SECRET: secret },
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    for (let tries = 0; ; tries++) {
      const up = await fetch(url, { method: 'POST', body: '{}' }).then(
        () => true,
        () => false,
      );
      if (up) break;
      if (tries > 100) throw new Error('the receiver did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  afterAll(() => {
    child?.kill();
    rmSync(folder, { recursive: true, force: true });
  });

  const send = (body: string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  it('answers 204 to a signed event and logs its id and type', async () => {
    const body = JSON.stringify({ type: 'message.sent', timestamp: new Date().toISOString(), data: { id: 'msg_1' } });
    const timestamp = new Date();
    const signature = new Webhook(secret).sign('evt_doc_1', timestamp, body);
    const response = await send(body, {
      'webhook-id': 'evt_doc_1',
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    });
    expect(response.status).toBe(204);
    await expect.poll(() => output).toContain('evt_doc_1 message.sent');
  });

  it('answers 400 to a forged signature', async () => {
    const body = JSON.stringify({ type: 'message.sent', timestamp: new Date().toISOString(), data: {} });
    const timestamp = new Date();
    const forged = new Webhook(`whsec_${Buffer.from('another secret entirely, 32 b!!!').toString('base64')}`).sign(
      'evt_doc_2',
      timestamp,
      body,
    );
    const response = await send(body, {
      'webhook-id': 'evt_doc_2',
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': forged,
    });
    expect(response.status).toBe(400);
  });
});
