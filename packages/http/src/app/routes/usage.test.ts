/**
 * @module `GET /api/usage`: `from` and `to` take a date or an ISO 8601 timestamp, which counts the
 * UTC day containing it (issue: `?from=<ISO timestamp>` was 400 though Parley's own timestamps are
 * ISO 8601). One reply is made on 2026-11-27 (UTC), late in the day.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { ReplyWorker, type ReplyOutcome } from '@parley/core';
import { ManualClock, scriptedModel } from '@parley/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, json, type Harness } from '../../test-support/harness.js';

describe('GET /api/usage', () => {
  let h: Harness;
  let worker: ReplyWorker;
  beforeAll(async () => {
    const adapters = memoryAdapters();
    const clock = new ManualClock(Date.parse('2026-11-27T23:30:00.000Z'));
    const tiny = scriptedModel([{ deltas: ['Hi'], usage: { inputTokens: 12, outputTokens: 3 } }]);
    h = await harness({}, adapters, { clock, models: { tiny } });
    const outcomes: ReplyOutcome[] = [];
    const onOutcome = (outcome: ReplyOutcome) => outcomes.push(outcome);
    worker = new ReplyWorker({ replies: h.core.replies, queue: adapters.replyQueue, pollMs: 10, onOutcome });
    worker.start();
    const agentBody = { name: 'Ada', description: '', model: 'tiny' };
    const agent = await json(await h.call('POST', '/api/agents', { json: agentBody }));
    const conversation = await json(await h.call('POST', '/api/conversations', { json: { agentId: agent.id } }));
    const message = { role: 'user', content: 'Hello' };
    await h.call('POST', `/api/conversations/${conversation.id}/messages`, { json: message });
    // Asked for directly: no relay runs here to queue the automatic reply.
    expect((await h.call('POST', `/api/conversations/${conversation.id}/reply`)).status).toBe(202);
    for (let i = 0; i < 500 && outcomes.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(outcomes).toHaveLength(1);
  });
  afterAll(() => worker.stop());

  const usage = async (query: string) => {
    const response = await h.call('GET', `/api/usage?${query}`);
    return { status: response.status, body: await json(response) };
  };
  const counted = async (query: string) => {
    const { status, body } = await usage(query);
    expect(status, query).toBe(200);
    return { from: body.from, to: body.to, inputTokens: body.inputTokens, replies: body.replies };
  };

  it('takes dates, and timestamps as Parley writes them: the UTC day containing each', async () => {
    const the27th = { from: '2026-11-27', to: '2026-11-27', inputTokens: 12, replies: 1 };
    expect(await counted('from=2026-11-27&to=2026-11-27')).toEqual(the27th);
    expect(await counted('from=2026-11-27T10:00:00.000Z&to=2026-11-27T10:00:00.000Z')).toEqual(the27th);
    expect(await counted('from=2026-11-27T00:00:00Z&to=2026-11-27T23:59:59.999Z')).toEqual(the27th);
    expect(await counted('from=2026-11-27T23:59:59.999Z')).toEqual(the27th);
    const the26th = { from: '2026-11-26', to: '2026-11-26', inputTokens: 0, replies: 0 };
    expect(await counted('from=2026-11-26T23:59:59.999Z&to=2026-11-26T23:59Z')).toEqual(the26th);
  });

  it('takes a timestamp with a UTC offset: the UTC day of that instant, not the local one', async () => {
    const the27th = { from: '2026-11-27', to: '2026-11-27', replies: 1 };
    // 01:00 on the 28th at +02:00 is 23:00 on the 27th UTC; 20:00 on the 27th at -05:00 is 01:00 on the 28th UTC.
    expect(await counted('from=2026-11-28T01:00:00%2B02:00&to=2026-11-28T01:00:00%2B02:00')).toMatchObject(the27th);
    const the28th = { from: '2026-11-28', to: '2026-11-28', replies: 0 };
    expect(await counted('from=2026-11-27T20:00:00-05:00&to=2026-11-28')).toMatchObject(the28th);
    // A `+` left unencoded in a query arrives as a space: taken as the `+` it was.
    expect(await counted('from=2026-11-28T01:00:00+02:00&to=2026-11-27')).toMatchObject(the27th);
  });

  it.each([
    ['a timestamp without a time zone', '2026-11-27T10:00:00'],
    ['an hour of 25', '2026-11-27T25:00:00Z'],
    ['a day that does not exist', '2026-02-30'],
    ['a timestamp on a day that does not exist', '2026-02-30T10:00:00Z'],
    ['an offset of 24 hours', '2026-11-27T10:00:00+24:00'],
    ['an instant after the year 9999', '9999-12-31T23:00:00-05:00'],
    ['words', 'yesterday'],
  ])('refuses %s with 400 at from', async (_case, from) => {
    const { status, body } = await usage(`from=${encodeURIComponent(from)}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual(['from']);
  });
});
