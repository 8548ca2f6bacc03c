/**
 * @module `GET /api/key`: any valid key learns its workspace, plan and scopes (the console shows
 * what they allow), whatever its scopes, and never the key itself; without a key, 401.
 */
import { describe, expect, it } from 'vitest';
import { harness, json } from '../../test-support/harness.js';

describe('GET /api/key', () => {
  it("answers the calling key's grants, with the rate-limit state, and nothing secret", async () => {
    const h = await harness();
    const response = await h.call('GET', '/api/key');
    expect(response.status).toBe(200);
    expect(response.headers.get('RateLimit')).toMatch(/^"pro";r=\d+;t=\d+$/);
    const body = await json(response);
    expect(body).toEqual({
      keyId: expect.stringMatching(/^key_/),
      workspaceId: 'ws1',
      plan: 'pro',
      scopes: ['*'],
      limitPerHour: null,
    });
    expect(JSON.stringify(body)).not.toContain(h.key);
  });

  it('needs no scope: a key holding one scope, or none, still reads what it holds', async () => {
    const h = await harness();
    const reader = await h.keyWith(['conversations:read']);
    expect(await json(await h.call('GET', '/api/key', { key: reader }))).toMatchObject({
      workspaceId: 'ws1',
      scopes: ['conversations:read'],
    });
    const nothing = await h.keyWith([]);
    const response = await h.call('GET', '/api/key', { key: nothing });
    expect(response.status).toBe(200);
    expect((await json(response)).scopes).toEqual([]);
    // The same key is refused anything else.
    expect((await h.call('GET', '/api/agents', { key: nothing })).status).toBe(403);
  });

  it('is 401 without a key or with an unknown one', async () => {
    const h = await harness();
    expect((await h.call('GET', '/api/key', { key: null })).status).toBe(401);
    expect((await h.call('GET', '/api/key', { key: 'not-a-known-key-at-all' })).status).toBe(401);
  });
});
