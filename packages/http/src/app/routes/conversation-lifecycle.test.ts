/** @module Tests of deleting conversations, reading one message, and conversation activity times. */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../../test-support/harness.js';

async function started(h: Harness) {
  const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
  return json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id, userId: 'u1' } }));
}

const send = async (h: Harness, conversationId: string, content: string) =>
  json(await h.call('POST', `/api/conversations/${conversationId}/messages`, { json: { role: 'user', content } }));

describe('conversation activity, delete and single messages', () => {
  it('updatedAt starts at createdAt and lastMessageAt at null; a message sets both, in reads, lists and events', async () => {
    const h = await harness();
    const conversation = await started(h);
    expect(conversation.updatedAt).toBe(conversation.createdAt);
    expect(conversation.lastMessageAt).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const message = await send(h, conversation.id, 'Hi');
    const read = await json(await h.call('GET', `/api/conversations/${conversation.id}`));
    expect(read).toEqual({ ...conversation, updatedAt: message.createdAt, lastMessageAt: message.createdAt });
    expect((await json(await h.call('GET', '/api/conversations?userId=u1'))).conversations).toEqual([read]);
    const completed = await json(
      await h.call('PATCH', `/api/conversations/${conversation.id}`, { json: { status: 'completed' } }),
    );
    expect(completed.lastMessageAt).toBe(message.createdAt);
    expect(completed.updatedAt >= message.createdAt).toBe(true);
    const events = await json(await h.call('GET', '/api/events?type=conversation.completed'));
    expect(events.events.map((event: { data: unknown }) => event.data)).toEqual([completed]);
  });

  it("GET /:id/messages/:messageId reads one message; another conversation's or workspace's is 404", async () => {
    const h = await harness();
    const conversation = await started(h);
    const other = await started(h);
    const message = await send(h, conversation.id, 'Hello there');
    const response = await h.call('GET', `/api/conversations/${conversation.id}/messages/${message.id}`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual(message);
    const missing = await h.call('GET', `/api/conversations/${other.id}/messages/${message.id}`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).error).toEqual({ code: 'not_found', message: `No message with id '${message.id}'.` });
    expect((await h.call('GET', `/api/conversations/conv_missing/messages/${message.id}`)).status).toBe(404);
    expect(
      (await h.call('GET', `/api/conversations/${conversation.id}/messages/${message.id}`, { key: h.otherKey })).status,
    ).toBe(404);
    expect(
      (
        await h.call('GET', `/api/conversations/${conversation.id}/messages/${message.id}`, {
          key: await h.keyWith(['agents:read']),
        })
      ).status,
    ).toBe(403);
  });

  it('DELETE /:id answers 200 {success, message}, removes it and its messages, records conversation.deleted with it as it was; again is 404', async () => {
    const h = await harness();
    const conversation = await started(h);
    const message = await send(h, conversation.id, 'Soon gone');
    const before = (await json(await h.call('GET', '/api/events?limit=100'))).events.length;
    expect((await h.call('DELETE', `/api/conversations/${conversation.id}`, { key: h.otherKey })).status).toBe(404);
    expect(
      (
        await h.call('DELETE', `/api/conversations/${conversation.id}`, {
          key: await h.keyWith(['conversations:read']),
        })
      ).status,
    ).toBe(403);
    const response = await h.call('DELETE', `/api/conversations/${conversation.id}`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      success: true,
      message: `Conversation ${conversation.id} and its messages were deleted.`,
    });
    expect((await h.call('GET', `/api/conversations/${conversation.id}`)).status).toBe(404);
    expect((await h.call('GET', `/api/conversations/${conversation.id}/messages/${message.id}`)).status).toBe(404);
    expect((await h.call('GET', `/api/conversations/${conversation.id}/messages`)).status).toBe(404);
    expect(
      (await h.call('POST', `/api/conversations/${conversation.id}/messages`, { json: { role: 'user', content: 'x' } }))
        .status,
    ).toBe(404);
    expect((await json(await h.call('GET', '/api/conversations'))).total).toBe(0);
    const after = (await json(await h.call('GET', '/api/events?limit=100'))).events;
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)).toMatchObject({
      type: 'conversation.deleted',
      data: { id: conversation.id, pendingToolCalls: [] },
    });
    expect((await h.call('DELETE', `/api/conversations/${conversation.id}`)).status).toBe(404);
  });

  it('page=0 says what is allowed, not the largest safe integer', async () => {
    const h = await harness();
    for (const path of ['/api/conversations?page=0', '/api/agents?page=0', '/api/webhooks?page=0']) {
      const body = await json(await h.call('GET', path));
      expect(body.error.code).toBe('validation_failed');
      expect(JSON.stringify(body.error)).toContain('must be at least 1');
      expect(JSON.stringify(body.error)).not.toContain('9007199254740991');
    }
  });
});
