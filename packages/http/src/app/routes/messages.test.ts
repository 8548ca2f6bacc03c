/** @module Tests of the message routes: sending, history paging, cursors, conflicts. */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../../test-support/harness.js';

async function withConversation(h: Harness) {
  const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
  return json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
}

describe('/api/conversations/:id/messages', () => {
  it('POST stores a message: 201 with the message', async () => {
    const h = await harness();
    const conversation = await withConversation(h);
    const response = await h.call('POST', `/api/conversations/${conversation.id}/messages`, {
      json: { content: 'Hello', role: 'user', metadata: { lang: 'en' } },
    });
    expect(response.status).toBe(201);
    expect(await json(response)).toEqual({
      id: expect.stringMatching(/^msg_/),
      conversationId: conversation.id,
      content: 'Hello',
      role: 'user',
      metadata: { lang: 'en' },
      toolCalls: null,
      toolCallId: null,
      createdAt: expect.any(String),
    });
  });

  it('GET pages history newest-first by page, oldest-first within a page, with a cursor', async () => {
    const h = await harness();
    const conversation = await withConversation(h);
    const url = `/api/conversations/${conversation.id}/messages`;
    for (const content of ['one', 'two', 'three', 'four', 'five']) {
      await h.call('POST', url, { json: { content, role: content === 'two' ? 'assistant' : 'user' } });
    }
    const first = await json(await h.call('GET', `${url}?limit=2`));
    expect(first.messages.map((m: { content: string }) => m.content)).toEqual(['four', 'five']);
    expect(first).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const second = await json(await h.call('GET', `${url}?limit=2&before=${encodeURIComponent(first.nextCursor)}`));
    expect(second.messages.map((m: { content: string }) => m.content)).toEqual(['two', 'three']);
    const third = await json(await h.call('GET', `${url}?limit=2&before=${encodeURIComponent(second.nextCursor)}`));
    expect(third).toEqual({ messages: [expect.objectContaining({ content: 'one' })], hasMore: false });
    const all = await json(await h.call('GET', url));
    expect(all.messages).toHaveLength(5);
    expect(all.hasMore).toBe(false);
    expect(all).not.toHaveProperty('nextCursor');
  });

  it('POST to a completed conversation is 409 conflict', async () => {
    const h = await harness();
    const conversation = await withConversation(h);
    await h.call('PATCH', `/api/conversations/${conversation.id}`, { json: { status: 'completed' } });
    const response = await h.call('POST', `/api/conversations/${conversation.id}/messages`, {
      json: { content: 'Hi', role: 'user' },
    });
    expect(response.status).toBe(409);
    expect((await json(response)).error.code).toBe('conflict');
  });

  it.each([
    [{ role: 'user' }, 'content'],
    [{ content: '', role: 'user' }, 'content'],
    [{ content: 'Hi', role: 'robot' }, 'role'],
    [{ content: 'Hi', role: 'user', metadata: [] }, 'metadata'],
  ])('POST %j is 400 validation_failed', async (body, path) => {
    const h = await harness();
    const conversation = await withConversation(h);
    const response = await h.call('POST', `/api/conversations/${conversation.id}/messages`, { json: body });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('validation_failed');
    expect(error.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
  });

  it('GET with a bad limit is 400 validation_failed; a forged or foreign cursor is 400 invalid_request', async () => {
    const h = await harness();
    const [one, two] = [await withConversation(h), await withConversation(h)];
    for (const c of [one, two])
      await h.call('POST', `/api/conversations/${c.id}/messages`, { json: { content: 'x', role: 'user' } });
    await h.call('POST', `/api/conversations/${two.id}/messages`, { json: { content: 'y', role: 'user' } });
    const tooMany = await h.call('GET', `/api/conversations/${one.id}/messages?limit=101`);
    expect((await json(tooMany)).error.code).toBe('validation_failed');
    const forged = await h.call('GET', `/api/conversations/${one.id}/messages?before=not-a-cursor`);
    expect(forged.status).toBe(400);
    expect((await json(forged)).error.code).toBe('invalid_request');
    const { nextCursor } = await json(await h.call('GET', `/api/conversations/${two.id}/messages?limit=1`));
    const foreign = await h.call('GET', `/api/conversations/${one.id}/messages?before=${nextCursor}`);
    expect(foreign.status).toBe(400);
    expect((await json(foreign)).error.code).toBe('invalid_request');
  });

  it("unknown and another workspace's conversations are 404", async () => {
    const h = await harness();
    const conversation = await withConversation(h);
    expect((await h.call('GET', '/api/conversations/conv_missing/messages')).status).toBe(404);
    expect(
      (await h.call('POST', '/api/conversations/conv_missing/messages', { json: { content: 'x', role: 'user' } }))
        .status,
    ).toBe(404);
    expect((await h.call('GET', `/api/conversations/${conversation.id}/messages`, { key: h.otherKey })).status).toBe(
      404,
    );
  });
});
