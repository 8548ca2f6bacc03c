/** @module Tests of bearer authentication: every 401 and the principal it sets. */
import { describe, expect, it } from 'vitest';
import { harness, json } from '../../test-support/harness.js';

describe('bearerAuth', () => {
  it.each([
    ['missing', undefined, 'Bearer realm="parley"'],
    ['another scheme', 'Basic dXNlcjpwYXNz', 'Bearer realm="parley", error="invalid_request"'],
    ['a scheme without a key', 'Bearer', 'Bearer realm="parley", error="invalid_request"'],
    [
      'a key with characters outside RFC 6750 b64token',
      'Bearer abc,def',
      'Bearer realm="parley", error="invalid_request"',
    ],
    ['an unknown key', 'Bearer prl_unknown', 'Bearer realm="parley", error="invalid_token"'],
  ])('%s is 401 unauthorized with a WWW-Authenticate Bearer challenge', async (_, authorization, challenge) => {
    const h = await harness();
    const response = await h.call('GET', '/api/agents', {
      key: null,
      headers: authorization ? { Authorization: authorization } : {},
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toBe(challenge);
    expect((await json(response)).error).toEqual({ code: 'unauthorized', message: expect.any(String) });
  });

  it('accepts the scheme in any case and sets the principal of the key', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', {
      key: null,
      headers: { Authorization: `bearer ${h.otherKey}` },
      json: { name: 'x', description: '', model: 'modelB-3' },
    });
    expect(response.status).toBe(201);
    const { id } = await json(response);
    expect((await h.core.agents.get({ workspaceId: 'ws2' }, id)).id).toBe(id);
  });

  it('a revoked key is 401', async () => {
    const h = await harness();
    const [record] = await h.core.apiKeys.list('ws1');
    await h.core.apiKeys.revoke(record!.keyId);
    expect((await h.call('GET', '/api/agents')).status).toBe(401);
  });

  it('a generated key with a typo is 401 and says so; the same key without the typo works', async () => {
    const h = await harness();
    const { key } = await h.core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
    const typo = `${key.slice(0, 20)}${key[20] === 'x' ? 'y' : 'x'}${key.slice(21)}`;
    const response = await h.call('GET', '/api/agents', { key: typo });
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toBe('Bearer realm="parley", error="invalid_token"');
    expect((await json(response)).error).toEqual({
      code: 'unauthorized',
      message: 'Invalid API key: its checksum does not match. Check it for a typo.',
    });
    expect((await h.call('GET', '/api/agents', { key })).status).toBe(200);
  });
});
