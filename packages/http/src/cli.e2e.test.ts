/**
 * @module The README walkthrough against the real `parley serve` process. It runs the built CLI
 * (`npm test` builds before vitest starts) on a free port and talks to it over TCP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function waitForKey(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no development key printed within 15 s:\n${output}`)), 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const key = /^ {2}KEY=(\S+)$/m.exec(output)?.[1];
      if (key) {
        clearTimeout(timer);
        resolve(key);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before printing a key:\n${output}`)));
  });
}

describe('parley serve (end to end)', () => {
  let child: ChildProcess;
  let base: string;
  let key: string;
  let stderr = '';

  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm test\`, which builds before testing.`);
    const port = await freePort();
    const { API_KEYS: _keys, REDIS_URL: _redis, ...env } = process.env;
    child = spawn(process.execPath, [cli, 'serve'], { cwd: root, env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    base = `http://127.0.0.1:${port}`;
    key = await waitForKey(child);
  });

  afterAll(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };

  it('walks the README: agent → conversation → messages → history pages → complete → webhook → plants', async () => {
    const agent = await call('POST', '/api/agents', { name: 'Billing helper', description: 'Answers billing questions', model: 'modelA-4' });
    expect(agent).toMatchObject({ status: 201, body: { id: expect.stringMatching(/^agt_/), status: 'active' } });

    const conversation = await call('POST', '/api/conversations', { agentId: agent.body.id, userId: 'user_42' });
    expect(conversation).toMatchObject({ status: 201, body: { agentId: agent.body.id, status: 'active' } });
    const messages = `/api/conversations/${conversation.body.id}/messages`;

    for (const [role, content] of [
      ['user', 'Hi, I was charged twice this month.'],
      ['assistant', 'Sorry about that! Which invoice?'],
      ['user', 'Invoice INV-1001.'],
    ]) {
      expect(await call('POST', messages, { role, content })).toMatchObject({ status: 201, body: { role, content } });
    }

    const newest = await call('GET', `${messages}?limit=2`);
    expect(newest.status).toBe(200);
    expect(newest.body.messages.map((m: { content: string }) => m.content)).toEqual(['Sorry about that! Which invoice?', 'Invoice INV-1001.']);
    expect(newest.body).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const older = await call('GET', `${messages}?limit=2&before=${newest.body.nextCursor}`);
    expect(older.body).toEqual({ messages: [expect.objectContaining({ content: 'Hi, I was charged twice this month.' })], hasMore: false });

    const completed = await call('PATCH', `/api/conversations/${conversation.body.id}`, { status: 'completed' });
    expect(completed).toMatchObject({ status: 200, body: { status: 'completed' } });
    expect((await call('POST', messages, { role: 'user', content: 'Still there?' })).status).toBe(409);

    const webhook = await call('POST', '/api/webhooks', { url: 'https://example.com/parley-webhooks', events: ['conversation.completed', 'message.sent'] });
    expect(webhook).toMatchObject({ status: 201, body: { id: expect.stringMatching(/^wh_/), enabled: true, secret: expect.stringMatching(/^whsec_/) } });

    const plants = await call('GET', '/sandbox/plants?limit=3');
    expect(plants.status).toBe(200);
    expect(plants.body).toHaveLength(3);
  });

  it('exits cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  });
});
