/** @module Tests of the conversation routes: lifecycle, filters, conflicts, tenancy. */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../../test-support/harness.js';

async function withAgent(h: Harness) {
  return json(await h.call('POST', '/api/agents', { json: agentInput }));
}

describe('/api/conversations', () => {
  it('POST starts an active conversation: 201 with userId null and metadata {} by default', async () => {
    const h = await harness();
    const agent = await withAgent(h);
    const response = await h.call('POST', '/api/conversations', { json: { agentId: agent.id } });
    expect(response.status).toBe(201);
    expect(await json(response)).toEqual({
      id: expect.stringMatching(/^conv_/),
      agentId: agent.id,
      userId: null,
      metadata: {},
      status: 'active',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      lastMessageAt: null,
      pendingToolCalls: [],
    });
  });

  it('GET /:id reads it; GET / lists with page, limit and the agentId/userId/status filters', async () => {
    const h = await harness();
    const [a, b] = [await withAgent(h), await withAgent(h)];
    const one = await json(
      await h.call('POST', '/api/conversations', { json: { agentId: a.id, userId: 'u1', metadata: { plan: 'gold' } } }),
    );
    const two = await json(await h.call('POST', '/api/conversations', { json: { agentId: b.id, userId: 'u2' } }));
    await h.call('PATCH', `/api/conversations/${two.id}`, { json: { status: 'completed' } });
    expect(await json(await h.call('GET', `/api/conversations/${one.id}`))).toEqual(one);
    const all = await json(await h.call('GET', '/api/conversations'));
    expect(all).toMatchObject({ total: 2, page: 1, limit: 20 });
    expect(all.conversations.map((c: { id: string }) => c.id)).toEqual([two.id, one.id]);
    const ids = async (query: string) =>
      (await json(await h.call('GET', `/api/conversations?${query}`))).conversations.map((c: { id: string }) => c.id);
    expect(await ids(`agentId=${a.id}`)).toEqual([one.id]);
    expect(await ids('userId=u2')).toEqual([two.id]);
    expect(await ids('status=active')).toEqual([one.id]);
    expect(await ids('page=2&limit=1')).toEqual([one.id]);
  });

  it('PATCH completes (200, whole resource), completing again is a no-op, reactivating is 409', async () => {
    const h = await harness();
    const agent = await withAgent(h);
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    const completed = await h.call('PATCH', `/api/conversations/${conversation.id}`, {
      json: { status: 'completed', metadata: { rating: 5 } },
    });
    expect(completed.status).toBe(200);
    expect(await json(completed)).toEqual({
      ...conversation,
      status: 'completed',
      metadata: { rating: 5 },
      updatedAt: expect.any(String),
    });
    expect(
      (await h.call('PATCH', `/api/conversations/${conversation.id}`, { json: { status: 'completed' } })).status,
    ).toBe(200);
    const reactivate = await h.call('PATCH', `/api/conversations/${conversation.id}`, { json: { status: 'active' } });
    expect(reactivate.status).toBe(409);
    expect((await json(reactivate)).error.code).toBe('conflict');
  });

  it('POST with an inactive agent is 409 conflict; with an unknown agent 404', async () => {
    const h = await harness();
    const agent = await withAgent(h);
    await h.call('PATCH', `/api/agents/${agent.id}`, { json: { status: 'inactive' } });
    const inactive = await h.call('POST', '/api/conversations', { json: { agentId: agent.id } });
    expect(inactive.status).toBe(409);
    expect((await json(inactive)).error.code).toBe('conflict');
    const unknown = await h.call('POST', '/api/conversations', { json: { agentId: 'agt_unknown' } });
    expect(unknown.status).toBe(404);
  });

  it.each([
    ['POST', { userId: 'u1' }, 'agentId'],
    ['POST', { agentId: 'agt_x', metadata: 'text' }, 'metadata'],
    ['POST', { agentId: 'agt_x', extra: true }, 'extra'],
    ['PATCH', { status: 'archived' }, 'status'],
    ['PATCH', { metadata: { __proto__: null, constructor: 1 } }, 'metadata'],
  ])('%s with an invalid body is 400 validation_failed', async (method, body, path) => {
    const h = await harness();
    const url = method === 'POST' ? '/api/conversations' : '/api/conversations/conv_x';
    const response = await h.call(method, url, { json: body });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
  });

  it('GET / with an out-of-range limit or unknown filter is 400', async () => {
    const h = await harness();
    expect((await h.call('GET', '/api/conversations?limit=0')).status).toBe(400);
    expect((await h.call('GET', '/api/conversations?status=open')).status).toBe(400);
    expect((await h.call('GET', '/api/conversations?agent=1')).status).toBe(400);
  });

  it("unknown ids and another workspace's conversations are 404", async () => {
    const h = await harness();
    const agent = await withAgent(h);
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    expect((await h.call('GET', '/api/conversations/conv_missing')).status).toBe(404);
    expect((await h.call('GET', `/api/conversations/${conversation.id}`, { key: h.otherKey })).status).toBe(404);
    expect(
      (
        await h.call('PATCH', `/api/conversations/${conversation.id}`, {
          key: h.otherKey,
          json: { status: 'completed' },
        })
      ).status,
    ).toBe(404);
    expect((await h.call('POST', '/api/conversations', { key: h.otherKey, json: { agentId: agent.id } })).status).toBe(
      404,
    );
  });
});
