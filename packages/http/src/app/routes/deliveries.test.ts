/**
 * @module Tests of the delivery routes (deliveries log, retry, recover, test, rotate-secret) and
 * the events routes, over memory adapters with a worker and a real receiver on loopback.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startReceiver, verifyHeaders, type Receiver } from '@parley/core/testing';
import { agentInput, harness, json, type Harness } from '../../test-support/harness.js';

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setup(): Promise<{ h: Harness; target: Receiver; hookId: string }> {
  const h = await harness({}, memoryAdapters(), {
    allowPrivateWebhookUrls: true,
    webhookRetryDelays: [0.05, 0.05],
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 } },
  });
  h.core.workers.start();
  cleanup.push(() => h.core.workers.stop());
  const target = await startReceiver();
  cleanup.push(() => target.close());
  const hook = await json(
    await h.call('POST', '/api/webhooks', {
      json: { url: target.url, events: ['agent.created', 'agent.updated'], secret: SECRET },
    }),
  );
  return { h, target, hookId: hook.id };
}

describe('/api/webhooks/:id deliveries and operator actions', () => {
  it('GET /deliveries pages the log with nextCursor; eventId filters; bad input is 400, unknown endpoint 404', async () => {
    const { h, target, hookId } = await setup();
    for (let index = 0; index < 3; index++) await h.call('POST', '/api/agents', { json: agentInput });
    await target.waitFor(3);
    await eventually(
      async () => (await json(await h.call('GET', `/api/webhooks/${hookId}/deliveries`))).deliveries.length === 3,
    );
    const page = await json(await h.call('GET', `/api/webhooks/${hookId}/deliveries?limit=2`));
    expect(page).toEqual({
      deliveries: [expect.objectContaining({ trigger: 'scheduled', status: 200, attempt: 1 }), expect.anything()],
      hasMore: true,
      nextCursor: expect.any(String),
    });
    expect(page.deliveries[0]).toEqual({
      id: expect.stringMatching(/^dlv_/),
      eventId: expect.stringMatching(/^evt_/),
      eventType: 'agent.created',
      attempt: 1,
      trigger: 'scheduled',
      status: 200,
      durationMs: expect.any(Number),
      error: null,
      responseBody: '',
      nextAttemptAt: null,
      createdAt: expect.any(String),
    });
    const rest = await json(
      await h.call('GET', `/api/webhooks/${hookId}/deliveries?limit=2&before=${page.nextCursor}`),
    );
    expect(rest).toEqual({ deliveries: [expect.anything()], hasMore: false });
    const filtered = await json(
      await h.call('GET', `/api/webhooks/${hookId}/deliveries?eventId=${page.deliveries[1].eventId}`),
    );
    expect(filtered.deliveries).toEqual([page.deliveries[1]]);
    expect((await h.call('GET', `/api/webhooks/${hookId}/deliveries?before=forged`)).status).toBe(400);
    expect((await h.call('GET', `/api/webhooks/${hookId}/deliveries?limit=101`)).status).toBe(400);
    expect((await h.call('GET', '/api/webhooks/wh_nope/deliveries')).status).toBe(404);
    expect((await h.call('GET', `/api/webhooks/${hookId}/deliveries`, { key: h.otherKey })).status).toBe(404);
    expect(
      (await h.call('GET', `/api/webhooks/${hookId}/deliveries`, { key: await h.keyWith(['webhooks:write']) })).status,
    ).toBe(403);
  });

  it('POST /deliveries/:deliveryId/retry → 202 and one manual attempt', async () => {
    const { h, target, hookId } = await setup();
    await h.call('POST', '/api/agents', { json: agentInput });
    await target.waitFor(1);
    await eventually(
      async () => (await json(await h.call('GET', `/api/webhooks/${hookId}/deliveries`))).deliveries.length === 1,
    );
    const [entry] = (await json(await h.call('GET', `/api/webhooks/${hookId}/deliveries`))).deliveries;
    const response = await h.call('POST', `/api/webhooks/${hookId}/deliveries/${entry.id}/retry`);
    expect(response.status).toBe(202);
    expect(await json(response)).toEqual({ eventId: entry.eventId, queued: true });
    await target.waitFor(2);
    expect(target.received[1]!.id).toBe(entry.eventId);
    expect((await h.call('POST', `/api/webhooks/${hookId}/deliveries/dlv_nope/retry`)).status).toBe(404);
    expect(
      (
        await h.call('POST', `/api/webhooks/${hookId}/deliveries/${entry.id}/retry`, {
          key: await h.keyWith(['webhooks:read']),
        })
      ).status,
    ).toBe(403);
  });

  it('POST /recover → 202 {events}; 409 while disabled; 400 for a bad window', async () => {
    const { h, target, hookId } = await setup();
    const since = new Date().toISOString();
    await h.call('PATCH', `/api/webhooks/${hookId}`, { json: { enabled: false } });
    await h.call('POST', '/api/agents', { json: agentInput });
    const disabled = await h.call('POST', `/api/webhooks/${hookId}/recover`, { json: { since } });
    expect(disabled.status).toBe(409);
    expect((await json(disabled)).error.code).toBe('conflict');
    await h.call('PATCH', `/api/webhooks/${hookId}`, { json: { enabled: true } });
    const recovered = await h.call('POST', `/api/webhooks/${hookId}/recover`, { json: { since } });
    expect(recovered.status).toBe(202);
    expect(await json(recovered)).toEqual({ events: 1 });
    await target.waitFor(1);
    expect(target.received[0]!.json.type).toBe('agent.created');
    const bad = await h.call('POST', `/api/webhooks/${hookId}/recover`, { json: { since: 'yesterday' } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.details.issues[0].path).toBe('since');
  });

  it('POST /test → 200 with the log entry of a signed evt_test_ delivery', async () => {
    const { h, target, hookId } = await setup();
    const response = await h.call('POST', `/api/webhooks/${hookId}/test`, {
      json: { eventType: 'conversation.completed' },
    });
    expect(response.status).toBe(200);
    const entry = await json(response);
    expect(entry).toMatchObject({
      eventId: expect.stringMatching(/^evt_test_/),
      eventType: 'conversation.completed',
      trigger: 'test',
      status: 200,
    });
    const received = target.received[0]!;
    expect(new Webhook(SECRET).verify(received.body, verifyHeaders(received))).toMatchObject({
      type: 'conversation.completed',
      data: { status: 'completed' },
    });
    expect((await h.call('POST', `/api/webhooks/${hookId}/test`, { json: { eventType: 'nope' } })).status).toBe(400);
  });

  it('POST /rotate-secret → 200 {secret, previousSecretExpiresAt}, with or without a body; both secrets sign for 24 h', async () => {
    const { h, target, hookId } = await setup();
    const rotated = await h.call('POST', `/api/webhooks/${hookId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const { secret } = await json(rotated);
    expect(secret).toMatch(/^whsec_/);
    await h.call('POST', '/api/agents', { json: agentInput });
    await target.waitFor(1);
    const received = target.received[0]!;
    for (const key of [secret, SECRET])
      expect(() => new Webhook(key).verify(received.body, verifyHeaders(received))).not.toThrow();
    const given = await h.call('POST', `/api/webhooks/${hookId}/rotate-secret`, {
      json: { secret: 'given-secret-0123456789' },
    });
    const answer = await json(given);
    expect(answer).toEqual({ secret: 'given-secret-0123456789', previousSecretExpiresAt: expect.any(String) });
    expect(Date.parse(answer.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    expect((await h.call('POST', `/api/webhooks/${hookId}/rotate-secret`, { json: { secret: 'short' } })).status).toBe(
      400,
    );
    expect((await h.call('POST', '/api/webhooks/wh_nope/rotate-secret')).status).toBe(404);
  });
});

describe('/api/events', () => {
  it('lists the log oldest first with a cursor, filters by type, reads one; needs events:read', async () => {
    const h = await harness();
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    await h.call('PATCH', `/api/agents/${agent.id}`, { json: { name: 'B' } });
    await h.call('POST', '/api/agents', { json: agentInput });
    const first = await json(await h.call('GET', '/api/events?limit=2'));
    expect(first).toEqual({
      events: [
        { id: expect.stringMatching(/^evt_/), type: 'agent.created', timestamp: expect.any(String), data: agent },
        expect.objectContaining({ type: 'agent.updated' }),
      ],
      hasMore: true,
      nextCursor: expect.any(String),
    });
    const rest = await json(await h.call('GET', `/api/events?after=${first.nextCursor}`));
    expect(rest).toEqual({ events: [expect.objectContaining({ type: 'agent.created' })], hasMore: false });
    const updates = await json(await h.call('GET', '/api/events?type=agent.updated'));
    expect(updates.events.map((event: { type: string }) => event.type)).toEqual(['agent.updated']);
    expect(await json(await h.call('GET', `/api/events/${first.events[0].id}`))).toEqual(first.events[0]);
    expect((await h.call('GET', `/api/events/${first.events[0].id}`, { key: h.otherKey })).status).toBe(404);
    expect((await h.call('GET', '/api/events?type=nope')).status).toBe(400);
    expect((await h.call('GET', '/api/events?after=forged')).status).toBe(400);
    expect((await h.call('GET', '/api/events', { key: await h.keyWith(['webhooks:read']) })).status).toBe(403);
    expect((await h.call('GET', '/api/events', { key: await h.keyWith(['events:read']) })).status).toBe(200);
  });
});
