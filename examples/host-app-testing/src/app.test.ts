/** @module Example (e): the host app tested with vitest on the memory adapters, through its routes and Parley's. */
import { memoryAdapters } from '@parley/adapter-memory';
import { expect, it } from 'vitest';
import { createSupportDesk, WORKSPACE } from './app.js';

it('opens a ticket as a conversation that Parley\'s API then shows', async () => {
  // The one line that differs from production: memory instead of Redis.
  const { app, core } = createSupportDesk(memoryAdapters());
  const agent = await core.agents.create(WORKSPACE, { name: 'Helpdesk', description: 'First line', model: 'modelA-4' });
  const { key } = await core.apiKeys.issue({ workspaceId: WORKSPACE, plan: 'pro', scopes: ['conversations:read'] });

  const opened = await app.request('/tickets', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ agentId: agent.id, customer: 'cust_7', question: 'Where is my refund?' }),
  });
  expect(opened.status).toBe(201);
  const { ticket } = (await opened.json()) as { ticket: string };

  const history = await app.request(`/parley/api/conversations/${ticket}/messages`, { headers: { Authorization: `Bearer ${key}` } });
  expect(history.status).toBe(200);
  expect(await history.json()).toMatchObject({ hasMore: false, messages: [{ role: 'user', content: 'Where is my refund?' }] });
  expect((await core.conversations.get(WORKSPACE, ticket)).userId).toBe('cust_7');
});

it('answers the desk\'s own errors in Parley\'s shape: an unknown agent is 404 not_found, a blank question 400', async () => {
  const { app, core } = createSupportDesk(memoryAdapters());
  const ticket = (body: object) =>
    app.request('/tickets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  const unknown = await ticket({ agentId: 'agt_missing', customer: 'cust_7', question: 'Hello?' });
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toEqual({ error: { code: 'not_found', message: expect.stringContaining('agt_missing') } });

  const agent = await core.agents.create(WORKSPACE, { name: 'Helpdesk', description: 'First line', model: 'modelA-4' });
  const blank = await ticket({ agentId: agent.id, customer: 'cust_7', question: '' });
  expect(blank.status).toBe(400);
  expect(await blank.json()).toMatchObject({ error: { code: 'validation_failed', details: { issues: [{ path: 'content' }] } } });
});
