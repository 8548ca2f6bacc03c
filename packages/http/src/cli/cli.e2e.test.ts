/**
 * @module The README walkthrough against the real `parley serve` process. It runs the built CLI
 * (`npm test` builds before vitest starts) on a free port and talks to it over TCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

describe('parley serve (end to end)', () => {
  let server: ServerProcess;
  let base: string;
  let key: string;

  beforeAll(async () => {
    server = await startServerProcess();
    base = server.base;
    key = /^ {2}KEY=(\S+)$/m.exec(server.output())![1]!;
  });

  afterAll(() => server.stop('SIGKILL'));

  const call = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('walks the README: agent → conversation → messages → history pages → complete → webhook, test, delete → plants', async () => {
    const agent = await call('POST', '/api/agents', {
      name: 'Billing helper',
      description: 'Answers billing questions',
      model: 'modelA-4',
    });
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
    expect(newest.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'Sorry about that! Which invoice?',
      'Invoice INV-1001.',
    ]);
    expect(newest.body).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const older = await call('GET', `${messages}?limit=2&before=${newest.body.nextCursor}`);
    expect(older.body).toEqual({
      messages: [expect.objectContaining({ content: 'Hi, I was charged twice this month.' })],
      hasMore: false,
    });

    const completed = await call('PATCH', `/api/conversations/${conversation.body.id}`, { status: 'completed' });
    expect(completed).toMatchObject({ status: 200, body: { status: 'completed' } });
    expect((await call('POST', messages, { role: 'user', content: 'Still there?' })).status).toBe(409);

    const webhook = await call('POST', '/api/webhooks', {
      url: 'https://example.com/parley-webhooks',
      events: ['conversation.completed', 'message.sent'],
    });
    expect(webhook).toMatchObject({
      status: 201,
      body: { id: expect.stringMatching(/^wh_/), enabled: true, secret: expect.stringMatching(/^whsec_/) },
    });
    // The walkthrough sends one test event (never retried), then deletes the endpoint so nothing retries against example.com.
    const test = await call('POST', `/api/webhooks/${webhook.body.id}/test`, { eventType: 'message.sent' });
    expect(test).toMatchObject({ status: 200, body: { trigger: 'test', eventType: 'message.sent', attempt: 1 } });
    expect(await call('DELETE', `/api/webhooks/${webhook.body.id}`)).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect((await call('GET', `/api/webhooks/${webhook.body.id}`)).status).toBe(404);

    const plants = await call('GET', '/sandbox/plants?limit=3');
    expect(plants.status).toBe(200);
    expect(plants.body).toHaveLength(3);
  });

  it('exits cleanly on SIGTERM', async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.stderr()).toBe('');
  });
});
