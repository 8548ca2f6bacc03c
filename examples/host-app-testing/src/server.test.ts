/**
 * @module Example (e), production side: without a reachable Redis it says what it needs, in one
 * line, and exits 1; on Redis it serves the desk, delivers webhooks and stops cleanly on SIGTERM.
 */
import { redisAdapters } from '@parley/adapter-redis';
import { deletePrefix, describeIfAvailable, probeRedis, REDIS_URL, uniquePrefix } from '@parley/adapter-redis/testing';
import { createCore } from '@parley/core';
import { startReceiver } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WORKSPACE } from './app.js';

const server = fileURLToPath(new URL('./server.ts', import.meta.url));

it('says it needs Redis at REDIS_URL when none answers there', async () => {
  // Port 1 on loopback: nothing listens there.
  const env = { ...process.env, REDIS_URL: 'redis://127.0.0.1:1', PORT: '0' };
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
    execFile(process.execPath, ['--import', 'tsx', server], { env, timeout: 15_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? (error.code as number) : 0, stderr }),
    ),
  );
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    'The support desk needs Redis at redis://127.0.0.1:1 (set REDIS_URL, or start one with `redis-server`).',
  );
}, 20_000);

const describeRedis = describeIfAvailable({ describe, it }, `Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('on Redis', () => {
  it('delivers the webhook of a ticket to a receiver on loopback, then exits 0 on SIGTERM', async () => {
    const prefix = uniquePrefix('example-desk');
    const receiver = await startReceiver();
    // The operator's side, on the same Redis and prefix: an agent and a webhook endpoint.
    const admin = redisAdapters({ url: REDIS_URL, prefix });
    const core = createCore(admin, { allowPrivateWebhookUrls: true });
    const agent = await core.agents.create(
      { workspaceId: WORKSPACE },
      {
        name: 'Helpdesk',
        description: 'First line',
        model: 'modelA-4',
      },
    );
    await core.webhooks.create({ workspaceId: WORKSPACE }, { url: receiver.url, events: ['message.sent'] });

    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    probe.close();
    const env = {
      ...process.env,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      PORT: String(port),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', server], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await expect.poll(() => output, { timeout: 15_000 }).toContain('Support desk on');
      const opened = await fetch(`http://127.0.0.1:${port}/tickets`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ agentId: agent.id, customer: 'cust_7', question: 'Where is my refund?' }),
      });
      expect(opened.status).toBe(201);
      await receiver.waitFor(1, 10_000);
      expect(receiver.received[0]!.json).toMatchObject({
        type: 'message.sent',
        data: { role: 'user', content: 'Where is my refund?' },
      });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await receiver.close();
      await admin.close();
      const client = new Redis(REDIS_URL);
      await deletePrefix(client, prefix);
      await client.quit();
    }
  }, 40_000);
});
