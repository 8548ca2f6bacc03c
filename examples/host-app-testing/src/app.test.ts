/** @module Example (e): the host app tested with vitest on the memory adapters, through its routes and Parley's. */
import { memoryAdapters } from '@parley/adapter-memory';
import { startReceiver } from '@parley/core/testing';
import { expect, it } from 'vitest';
import { createLogger } from '@parley/http';
import { Writable } from 'node:stream';
import { createSupportDesk, WORKSPACE } from './app.js';

/** A logger at `warn` whose lines land in an array. */
function collectingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()),
  });
  return { logger: createLogger('warn', destination), lines };
}

it("opens a ticket as a conversation that Parley's API then shows", async () => {
  // The one line that differs from production: memory instead of Redis.
  const { app, core } = createSupportDesk(memoryAdapters());
  const agent = await core.agents.create(
    { workspaceId: WORKSPACE },
    { name: 'Helpdesk', description: 'First line', model: 'modelA-4' },
  );
  const { key } = await core.apiKeys.issue({ workspaceId: WORKSPACE, plan: 'pro', scopes: ['conversations:read'] });

  const opened = await app.request('/tickets', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ agentId: agent.id, customer: 'cust_7', question: 'Where is my refund?' }),
  });
  expect(opened.status).toBe(201);
  const { ticket } = (await opened.json()) as { ticket: string };

  const history = await app.request(`/parley/api/conversations/${ticket}/messages`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  expect(history.status).toBe(200);
  expect(await history.json()).toMatchObject({
    hasMore: false,
    messages: [{ role: 'user', content: 'Where is my refund?' }],
  });
  expect((await core.conversations.get({ workspaceId: WORKSPACE }, ticket)).userId).toBe('cust_7');
});

it("answers a malformed JSON body on the desk's own route as 400 invalid_request, without an error log", async () => {
  const { logger, lines } = collectingLogger();
  const { app } = createSupportDesk(memoryAdapters(), { logger });
  const response = await app.request('/tickets', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{bad',
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({ error: { code: 'invalid_request', message: expect.any(String) } });
  expect(lines).toEqual([]);
});

it("answers the desk's own errors in Parley's shape: an unknown agent is 404 not_found, a blank question 400", async () => {
  const { app, core } = createSupportDesk(memoryAdapters());
  const ticket = (body: object) =>
    app.request('/tickets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  const unknown = await ticket({ agentId: 'agt_missing', customer: 'cust_7', question: 'Hello?' });
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toEqual({
    error: { code: 'not_found', message: expect.stringContaining('agt_missing') },
  });

  const agent = await core.agents.create(
    { workspaceId: WORKSPACE },
    { name: 'Helpdesk', description: 'First line', model: 'modelA-4' },
  );
  const blank = await ticket({ agentId: agent.id, customer: 'cust_7', question: '' });
  expect(blank.status).toBe(400);
  expect(await blank.json()).toMatchObject({
    error: { code: 'validation_failed', details: { issues: [{ path: 'content' }] } },
  });
});

it("delivers the ticket's webhook once the test starts the workers", async () => {
  const receiver = await startReceiver();
  // Webhooks to a receiver on loopback are refused unless allowed.
  const { app, core } = createSupportDesk(memoryAdapters(), { settings: { allowPrivateWebhookUrls: true } });
  core.workers.start();
  try {
    const agent = await core.agents.create(
      { workspaceId: WORKSPACE },
      { name: 'Helpdesk', description: '', model: 'modelA-4' },
    );
    await core.webhooks.create({ workspaceId: WORKSPACE }, { url: receiver.url, events: ['message.sent'] });
    const opened = await app.request('/tickets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ agentId: agent.id, customer: 'cust_7', question: 'Where is my refund?' }),
    });
    expect(opened.status).toBe(201);
    await receiver.waitFor(1, 10_000);
    const [delivered] = receiver.received;
    expect(delivered!.json).toMatchObject({ type: 'message.sent', data: { content: 'Where is my refund?' } });
  } finally {
    await core.workers.stop();
    await receiver.close();
  }
});
