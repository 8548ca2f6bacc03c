/** @module Tests of per-route scope checks (403). */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json } from '../../test-support/harness.js';

describe('requireScope', () => {
  it('a key with only agents:read may list agents but not create them (403 forbidden)', async () => {
    const h = await harness();
    const key = await h.keyWith(['agents:read']);
    expect((await h.call('GET', '/api/agents', { key })).status).toBe(200);
    const response = await h.call('POST', '/api/agents', { key, json: agentInput });
    expect(response.status).toBe(403);
    expect((await json(response)).error).toEqual({
      code: 'forbidden',
      message: expect.any(String),
      details: { requiredScope: 'agents:write' },
    });
  });

  it('messages use the conversations scopes', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    const url = `/api/conversations/${conversation.id}/messages`;
    const reader = await h.keyWith(['conversations:read']);
    expect((await h.call('GET', url, { key: reader })).status).toBe(200);
    expect((await h.call('POST', url, { key: reader, json: { content: 'x', role: 'user' } })).status).toBe(403);
    const writer = await h.keyWith(['conversations:write']);
    expect((await h.call('POST', url, { key: writer, json: { content: 'x', role: 'user' } })).status).toBe(201);
    expect((await h.call('GET', url, { key: await h.keyWith(['agents:read']) })).status).toBe(403);
  });

  it('an empty scope list grants nothing; * grants everything', async () => {
    const h = await harness();
    const none = await h.keyWith([]);
    for (const [method, path] of [
      ['GET', '/api/agents'],
      ['GET', '/api/conversations'],
      ['GET', '/api/webhooks'],
      ['DELETE', '/api/webhooks/wh_x'],
    ]) {
      expect((await h.call(method!, path!, { key: none })).status).toBe(403);
    }
    const all = await h.keyWith(['*']);
    expect((await h.call('GET', '/api/webhooks', { key: all })).status).toBe(200);
  });

  it('GET needs :read and PATCH/DELETE need :write on each resource', async () => {
    const h = await harness();
    const webhooksRead = await h.keyWith(['webhooks:read']);
    expect((await h.call('GET', '/api/webhooks/wh_missing', { key: webhooksRead })).status).toBe(404);
    expect((await h.call('PATCH', '/api/webhooks/wh_missing', { key: webhooksRead, json: {} })).status).toBe(403);
    expect((await h.call('DELETE', '/api/agents/agt_missing', { key: await h.keyWith(['agents:read']) })).status).toBe(
      403,
    );
    expect(
      (
        await h.call('PATCH', '/api/conversations/conv_missing', {
          key: await h.keyWith(['conversations:read']),
          json: {},
        })
      ).status,
    ).toBe(403);
  });
});
