/** @module Tests of the agent routes: shapes, statuses, validation, tenancy. */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json } from '../../test-support/harness.js';

describe('/api/agents', () => {
  it('POST creates an active agent: 201 with every field of docs/api.md#resources', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', {
      json: { ...agentInput, temperature: 0.5, configuration: { tone: 'warm' } },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const agent = await json(response);
    expect(agent).toEqual({
      id: expect.stringMatching(/^agt_/),
      ...agentInput,
      systemPrompt: null,
      temperature: 0.5,
      maxTokens: null,
      configuration: { tone: 'warm' },
      tools: [],
      maxSteps: 8,
      autoReply: true,
      mcpServers: [],
      status: 'active',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: agent.createdAt,
    });
  });

  it('GET /:id returns the agent; GET / lists newest first with total, page and limit', async () => {
    const h = await harness();
    const first = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const second = await json(await h.call('POST', '/api/agents', { json: { ...agentInput, name: 'Grace' } }));
    const got = await h.call('GET', `/api/agents/${first.id}`);
    expect(got.status).toBe(200);
    expect(await json(got)).toEqual(first);
    const list = await h.call('GET', '/api/agents?page=1&limit=1');
    expect(list.status).toBe(200);
    expect(await json(list)).toEqual({ agents: [second], total: 2, page: 1, limit: 1 });
    expect(await json(await h.call('GET', '/api/agents'))).toMatchObject({ total: 2, page: 1, limit: 20 });
  });

  it('GET / filters by status', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    await h.call('PATCH', `/api/agents/${agent.id}`, { json: { status: 'inactive' } });
    await h.call('POST', '/api/agents', { json: agentInput });
    const inactive = await json(await h.call('GET', '/api/agents?status=inactive'));
    expect(inactive.agents.map((a: { id: string }) => a.id)).toEqual([agent.id]);
    expect(inactive.total).toBe(1);
  });

  it('PATCH returns 200 with the whole updated agent', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const response = await h.call('PATCH', `/api/agents/${agent.id}`, {
      json: { name: 'Renamed', configuration: { a: 1 }, maxTokens: 100 },
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      ...agent,
      name: 'Renamed',
      configuration: { a: 1 },
      maxTokens: 100,
      updatedAt: expect.any(String),
    });
  });

  it('mcpServers: header values are stored but never returned; a PATCH of another field keeps the list, a PATCH of the list replaces it', async () => {
    const h = await harness();
    const server = { label: 'shop', url: 'https://93.184.216.34/mcp', headers: { Authorization: 'Bearer hidden-1' } };
    const created = await json(await h.call('POST', '/api/agents', { json: { ...agentInput, mcpServers: [server] } }));
    const shown = [{ label: 'shop', url: server.url, headerNames: ['Authorization'], requireApproval: 'always' }];
    expect(created.mcpServers).toEqual(shown);
    const renamed = await json(await h.call('PATCH', `/api/agents/${created.id}`, { json: { name: 'Renamed' } }));
    expect(renamed.mcpServers).toEqual(shown);
    // The values stay stored (hidden) through a PATCH of another field, and go with the list.
    const stored = () => h.core.storage.agents.get({ workspaceId: 'ws1' }, created.id);
    expect((await stored())?.mcpHeaders).toEqual({ shop: { Authorization: 'Bearer hidden-1' } });
    const replaced = await json(
      await h.call('PATCH', `/api/agents/${created.id}`, {
        json: { mcpServers: [{ label: 'docs', url: 'https://93.184.216.34/docs', requireApproval: 'never' }] },
      }),
    );
    expect(replaced.mcpServers).toEqual([
      { label: 'docs', url: 'https://93.184.216.34/docs', headerNames: [], requireApproval: 'never' },
    ]);
    expect((await stored())?.mcpHeaders).toEqual({});
    const cleared = await json(await h.call('PATCH', `/api/agents/${created.id}`, { json: { mcpServers: [] } }));
    expect(cleared.mcpServers).toEqual([]);
    const read = await json(await h.call('GET', `/api/agents/${created.id}`));
    expect(read.mcpServers).toEqual([]);
    const events = await json(await h.call('GET', '/api/events?limit=100'));
    expect(JSON.stringify([created, renamed, replaced, read, events])).not.toContain('hidden-1');
  });

  it('DELETE returns 200 {success, message} and the agent is gone', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const response = await h.call('DELETE', `/api/agents/${agent.id}`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ success: true, message: expect.stringContaining(agent.id) });
    expect((await h.call('GET', `/api/agents/${agent.id}`)).status).toBe(404);
    expect((await h.call('DELETE', `/api/agents/${agent.id}`)).status).toBe(404);
  });

  it.each([
    ['a missing required field', { name: 'Ada', model: 'modelA-4' }, 'description'],
    ['an unknown model', { ...agentInput, model: 'gpt-9' }, 'model'],
    ['an unknown field', { ...agentInput, colour: 'blue' }, 'colour'],
    ['temperature out of range', { ...agentInput, temperature: 3 }, 'temperature'],
    ['a non-integer maxTokens', { ...agentInput, maxTokens: 1.5 }, 'maxTokens'],
    ['a name of the wrong type', { ...agentInput, name: 42 }, 'name'],
    ['configuration that is not an object', { ...agentInput, configuration: [1] }, 'configuration'],
  ])('POST with %s is 400 validation_failed naming the field', async (_, body, path) => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', { json: body });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues).toEqual(expect.arrayContaining([{ path, message: expect.any(String) }]));
    expect(JSON.stringify(error)).not.toContain('gpt-9');
  });

  it('POST without a body is 400 validation_failed: a JSON object is required, at path body', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents');
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues).toEqual([
      { path: 'body', message: 'A JSON object is required: the request has no body.' },
    ]);
    for (const body of ['null', '"text"', '[]', '42']) {
      const other = await json(
        await h.call('POST', '/api/agents', { raw: body, headers: { 'Content-Type': 'application/json' } }),
      );
      expect(other.error.details.issues).toEqual([{ path: 'body', message: 'A JSON object is required.' }]);
    }
  });

  it.each([
    ['page=0', 'page'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['status=deleted', 'status'],
    ['sort=name', 'sort'],
  ])('GET /?%s is 400 validation_failed', async (query, path) => {
    const h = await harness();
    const response = await h.call('GET', `/api/agents?${query}`);
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues.map((issue: { path: string }) => issue.path)).toEqual([path]);
  });

  it('PATCH validates before looking the agent up, and 404s an unknown one', async () => {
    const h = await harness();
    const invalid = await h.call('PATCH', '/api/agents/agt_missing', { json: { status: 'paused' } });
    expect(invalid.status).toBe(400);
    const missing = await h.call('PATCH', '/api/agents/agt_missing', { json: { name: 'x' } });
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe('not_found');
  });

  it("another workspace's agent is 404 for every operation", async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const asOther = { key: h.otherKey };
    expect((await h.call('GET', `/api/agents/${agent.id}`, asOther)).status).toBe(404);
    expect((await h.call('PATCH', `/api/agents/${agent.id}`, { ...asOther, json: { name: 'x' } })).status).toBe(404);
    expect((await h.call('DELETE', `/api/agents/${agent.id}`, asOther)).status).toBe(404);
    expect(await json(await h.call('GET', '/api/agents', asOther))).toMatchObject({ agents: [], total: 0 });
  });
});
