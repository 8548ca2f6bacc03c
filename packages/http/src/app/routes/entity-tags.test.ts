/** @module Tests of `ETag` and `If-Match` (README "Optimistic concurrency"): agents, conversations, webhook endpoints. */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json, type Harness } from '../../test-support/harness.js';

const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/;

async function etagOf(h: Harness, path: string): Promise<string> {
  const response = await h.call('GET', path);
  expect(response.status).toBe(200);
  const etag = response.headers.get('ETag');
  expect(etag).toMatch(STRONG_TAG);
  return etag!;
}

async function eventCount(h: Harness, type: string): Promise<number> {
  return (await json(await h.call('GET', `/api/events?type=${type}&limit=100`))).events.length;
}

describe('If-None-Match', () => {
  it('a GET whose If-None-Match matches the ETag answers 304 without a body; a changed resource 200', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    for (const path of [`/api/agents/${agent.id}`, `/api/conversations/${conversation.id}`]) {
      const etag = await etagOf(h, path);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const notModified = await h.call('GET', path, { headers: { 'If-None-Match': ifNoneMatch } });
        expect([path, ifNoneMatch, notModified.status]).toEqual([path, ifNoneMatch, 304]);
        expect(notModified.headers.get('ETag')).toBe(etag);
        expect(await notModified.text()).toBe('');
      }
      for (const ifNoneMatch of ['"other"', 'not a tag']) {
        const full = await h.call('GET', path, { headers: { 'If-None-Match': ifNoneMatch } });
        expect(full.status).toBe(200);
        expect(await json(full)).toMatchObject({ id: path.split('/').at(-1) });
      }
    }
    const path = `/api/agents/${agent.id}`;
    const before = await etagOf(h, path);
    await h.call('PATCH', path, { json: { name: 'Changed' } });
    const changed = await h.call('GET', path, { headers: { 'If-None-Match': before } });
    expect(changed.status).toBe(200);
    expect((await json(changed)).name).toBe('Changed');
    // A write never answers 304: If-None-Match is for reads.
    expect((await h.call('PATCH', path, { json: {}, headers: { 'If-None-Match': '*' } })).status).toBe(200);
  });
});

describe('ETag and If-Match', () => {
  it('agents: GET and PATCH carry the same strong ETag; a stale If-Match is 412 and changes nothing', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const path = `/api/agents/${agent.id}`;
    const first = await etagOf(h, path);
    expect(await etagOf(h, path)).toBe(first);

    const patched = await h.call('PATCH', path, { json: { name: 'Bea' }, headers: { 'If-Match': first } });
    expect(patched.status).toBe(200);
    const second = patched.headers.get('ETag');
    expect(second).toMatch(STRONG_TAG);
    expect(second).not.toBe(first);
    expect(await etagOf(h, path)).toBe(second);

    const updates = await eventCount(h, 'agent.updated');
    const stale = await h.call('PATCH', path, { json: { name: 'Cyd' }, headers: { 'If-Match': first } });
    expect(stale.status).toBe(412);
    expect((await json(stale)).error).toMatchObject({ code: 'precondition_failed', details: { etag: second } });
    expect((await json(await h.call('GET', path))).name).toBe('Bea');
    expect(await eventCount(h, 'agent.updated')).toBe(updates);
  });

  it('If-Match: * matches any existing resource, a list matches when one tag does, a weak tag never matches', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const path = `/api/agents/${agent.id}`;
    const etag = await etagOf(h, path);
    expect((await h.call('PATCH', path, { json: { name: 'Star' }, headers: { 'If-Match': '*' } })).status).toBe(200);
    const current = await etagOf(h, path);
    expect(
      (await h.call('PATCH', path, { json: { name: 'Weak' }, headers: { 'If-Match': `W/${current}` } })).status,
    ).toBe(412);
    expect(
      (await h.call('PATCH', path, { json: { name: 'List' }, headers: { 'If-Match': `${etag}, ${current}` } })).status,
    ).toBe(200);
    expect(
      (await h.call('PATCH', '/api/agents/agt_missing', { json: { name: 'X' }, headers: { 'If-Match': '*' } })).status,
    ).toBe(404);
    const malformed = await h.call('PATCH', path, { json: { name: 'Bad' }, headers: { 'If-Match': 'not-quoted' } });
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).error.code).toBe('invalid_request');
    // An empty patch writes nothing but still answers to its precondition.
    expect((await h.call('PATCH', path, { json: {}, headers: { 'If-Match': etag } })).status).toBe(412);
    expect((await json(await h.call('GET', path))).name).toBe('List');
  });

  it('agents: DELETE with a stale If-Match is 412 and deletes nothing; with the current one it deletes', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const path = `/api/agents/${agent.id}`;
    const stale = await etagOf(h, path);
    await h.call('PATCH', path, { json: { description: 'Changed by someone else' } });
    const refused = await h.call('DELETE', path, { headers: { 'If-Match': stale } });
    expect(refused.status).toBe(412);
    expect(await eventCount(h, 'agent.deleted')).toBe(0);
    expect((await h.call('GET', path)).status).toBe(200);
    expect((await h.call('DELETE', path, { headers: { 'If-Match': await etagOf(h, path) } })).status).toBe(200);
    expect((await h.call('GET', path)).status).toBe(404);
  });

  it('of 10 concurrent PATCHes with the same If-Match exactly one is applied (the check is atomic with the write)', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const path = `/api/agents/${agent.id}`;
    const etag = await etagOf(h, path);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        h.call('PATCH', path, { json: { name: `Writer ${index}` }, headers: { 'If-Match': etag } }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(9).fill(412)]);
    const winner = await json(responses.find((response) => response.status === 200)!);
    expect((await json(await h.call('GET', path))).name).toBe(winner.name);
    expect(await eventCount(h, 'agent.updated')).toBe(1);
  });

  it('conversations: PATCH honours If-Match, even when the patch would change nothing', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const conversation = await json(
      await h.call('POST', '/api/conversations', { json: { agentId: agent.id, userId: 'u1' } }),
    );
    const path = `/api/conversations/${conversation.id}`;
    const etag = await etagOf(h, path);
    const patched = await h.call('PATCH', path, {
      json: { metadata: { topic: 'billing' } },
      headers: { 'If-Match': etag },
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('ETag')).toBe(await etagOf(h, path));
    expect((await h.call('PATCH', path, { json: { status: 'active' }, headers: { 'If-Match': etag } })).status).toBe(
      412,
    );
    expect((await h.call('PATCH', path, { json: { status: 'completed' }, headers: { 'If-Match': etag } })).status).toBe(
      412,
    );
    expect((await json(await h.call('GET', path))).status).toBe('active');
    expect(await eventCount(h, 'conversation.completed')).toBe(0);
  });

  it('conversations: a message changes the ETag (lastMessageAt), so a DELETE with the tag read before it is 412 and deletes nothing', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    const path = `/api/conversations/${conversation.id}`;
    const before = await etagOf(h, path);
    const message = await json(
      await h.call('POST', `${path}/messages`, { json: { role: 'user', content: 'Still here?' } }),
    );
    expect((await h.call('DELETE', path, { headers: { 'If-Match': before } })).status).toBe(412);
    expect((await h.call('GET', `${path}/messages/${message.id}`)).headers.get('ETag')).toMatch(STRONG_TAG);
    const current = await etagOf(h, path);
    expect(current).not.toBe(before);
    expect((await h.call('DELETE', path, { headers: { 'If-Match': current } })).status).toBe(200);
    expect((await h.call('GET', path)).status).toBe(404);
  });

  it('webhook endpoints: the ETag covers the API view; a stale If-Match refuses PATCH and DELETE', async () => {
    const h = await harness();
    const endpoint = await json(
      await h.call('POST', '/api/webhooks', { json: { url: 'https://example.com/hooks', events: ['agent.created'] } }),
    );
    const path = `/api/webhooks/${endpoint.id}`;
    const stale = await etagOf(h, path);
    const patched = await h.call('PATCH', path, { json: { enabled: false }, headers: { 'If-Match': stale } });
    expect(patched.status).toBe(200);
    const current = patched.headers.get('ETag');
    expect(current).toBe(await etagOf(h, path));
    expect((await h.call('PATCH', path, { json: { enabled: true }, headers: { 'If-Match': stale } })).status).toBe(412);
    expect((await h.call('DELETE', path, { headers: { 'If-Match': stale } })).status).toBe(412);
    expect((await json(await h.call('GET', path))).enabled).toBe(false);
    expect((await h.call('DELETE', path, { headers: { 'If-Match': current! } })).status).toBe(200);
    expect((await h.call('GET', path)).status).toBe(404);
    expect((await h.call('DELETE', path, { headers: { 'If-Match': '*' } })).status).toBe(404);
  });
});
