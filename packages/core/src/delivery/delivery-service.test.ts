/**
 * @module DeliveryService on the memory adapters with real receivers: the deliveries log and its
 * cursor, manual retry, recover, test events and secret rotation.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, ParleyError, type Core, type EventType } from '../index.js';
import { signingSecrets } from './signing.js';
import { ManualClock } from '../testing/clock.js';
import { StaticHostResolver } from '../testing/host-resolver.js';
import { rejection } from '../test-support/errors.js';
import { eventually, startReceiver, verifyHeaders, type Receiver } from '../testing/receiver.js';
import { undiciTransport } from './undici-transport.js';

const WS = 'ws1';
const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function setup(options: { worker?: boolean } = {}): Core {
  const transport = undiciTransport({ allowPrivate: true });
  const core = createCore(memoryAdapters(), {
    allowPrivateWebhookUrls: true,
    hostResolver: new StaticHostResolver(),
    webhookTransport: transport,
    webhookRetryDelays: [0.05, 0.05],
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 } },
  });
  cleanup.push(() => transport.close());
  if (options.worker !== false) {
    core.workers.start();
    cleanup.push(() => core.workers.stop());
  }
  return core;
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  cleanup.push(() => started.close());
  return started;
}

const endpoint = (core: Core, url: string, events: EventType[] = ['agent.created']) =>
  core.webhooks.create({ workspaceId: WS }, { url, events: events as [EventType, ...EventType[]], secret: SECRET });
const agentInput = { name: 'Ada', description: 'Answers', model: 'modelA-4' } as const;

describe('DeliveryService', () => {
  it('pages the deliveries log newest first with an opaque cursor, and filters by event', async () => {
    const core = setup();
    const target = await receiver();
    const hook = await endpoint(core, target.url);
    for (let index = 0; index < 5; index++) await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 5);
    const first = await core.deliveries.list({ workspaceId: WS }, hook.id, { limit: 2 });
    expect(first).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const second = await core.deliveries.list({ workspaceId: WS }, hook.id, { limit: 2, before: first.nextCursor });
    const third = await core.deliveries.list({ workspaceId: WS }, hook.id, { limit: 2, before: second.nextCursor });
    expect(third).toEqual({ deliveries: [expect.anything()], hasMore: false });
    const ids = [...first.deliveries, ...second.deliveries, ...third.deliveries].map((entry) => entry.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const one = first.deliveries[0]!;
    expect((await core.deliveries.list({ workspaceId: WS }, hook.id, { eventId: one.eventId })).deliveries).toEqual([
      one,
    ]);
    expect(await rejection(core.deliveries.list({ workspaceId: WS }, hook.id, { before: 'forged' }))).toMatchObject({
      code: 'invalid_request',
    });
    expect(await rejection(core.deliveries.list({ workspaceId: WS }, hook.id, { limit: 0 }))).toMatchObject({
      code: 'validation_failed',
    });
    expect(await rejection(core.deliveries.list({ workspaceId: 'ws2' }, hook.id))).toMatchObject({ code: 'not_found' });
  });

  it('retries a logged delivery once, now, with trigger manual', async () => {
    const core = setup();
    const target = await receiver();
    target.answer = () => 500;
    const hook = await endpoint(core, target.url);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(3);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 3);
    const [last] = (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries;
    target.answer = () => 200;
    expect(await core.deliveries.retry({ workspaceId: WS }, hook.id, last!.id)).toEqual({
      eventId: last!.eventId,
      queued: true,
    });
    await target.waitFor(4);
    expect(target.received[3]!.id).toBe(last!.eventId);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 4);
    expect((await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries[0]).toMatchObject({
      trigger: 'manual',
      attempt: 1,
      status: 200,
    });
    expect(await rejection(core.deliveries.retry({ workspaceId: WS }, hook.id, 'dlv_nope'))).toMatchObject({
      code: 'not_found',
    });
    await core.webhooks.update({ workspaceId: WS }, hook.id, { enabled: false });
    expect(await rejection(core.deliveries.retry({ workspaceId: WS }, hook.id, last!.id))).toMatchObject({
      code: 'conflict',
    });
  });

  it('recovers what a disabled endpoint missed, only once re-enabled, skipping what it received', async () => {
    const core = setup();
    const target = await receiver();
    const hook = await endpoint(core, target.url, ['agent.created', 'agent.deleted']);
    const since = new Date().toISOString();
    const delivered = await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(1);
    await core.webhooks.update({ workspaceId: WS }, hook.id, { enabled: false });
    const missed = [
      await core.agents.create({ workspaceId: WS }, agentInput),
      await core.agents.create({ workspaceId: WS }, agentInput),
    ];
    await core.agents.update({ workspaceId: WS }, missed[0]!.id, { name: 'not subscribed' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(1);
    expect(await rejection(core.deliveries.recover({ workspaceId: WS }, hook.id, { since }))).toMatchObject({
      code: 'conflict',
    });
    await core.webhooks.update({ workspaceId: WS }, hook.id, { enabled: true });
    expect(await core.deliveries.recover({ workspaceId: WS }, hook.id, { since })).toEqual({ events: 2 });
    await target.waitFor(3);
    expect(
      target.received
        .slice(1)
        .map((received) => received.json.data.id)
        .sort(),
    ).toEqual(missed.map((agent) => agent.id).sort());
    expect(target.received[0]!.json.data.id).toBe(delivered.id);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 3);
    expect(
      (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.slice(0, 2).map((entry) => entry.trigger),
    ).toEqual(['recover', 'recover']);
    // A window in the future holds nothing; until before since is refused.
    expect(
      await core.deliveries.recover({ workspaceId: WS }, hook.id, {
        since: new Date(Date.now() + 60_000).toISOString(),
      }),
    ).toEqual({ events: 0 });
    expect(
      await rejection(
        core.deliveries.recover({ workspaceId: WS }, hook.id, { since, until: '2000-01-01T00:00:00.000Z' }),
      ),
    ).toMatchObject({ code: 'validation_failed' });
  });

  it('sends a signed test event synchronously and answers with its log entry', async () => {
    const core = setup({ worker: false });
    const target = await receiver();
    target.answer = () => ({ status: 202, body: 'thanks' });
    const hook = await endpoint(core, target.url);
    const entry = await core.deliveries.test({ workspaceId: WS }, hook.id, { eventType: 'message.received' });
    expect(entry).toMatchObject({
      eventId: expect.stringMatching(/^evt_test_/),
      eventType: 'message.received',
      trigger: 'test',
      attempt: 1,
      status: 202,
      responseBody: 'thanks',
      error: null,
    });
    expect(target.received).toHaveLength(1);
    const received = target.received[0]!;
    expect(received.id).toBe(entry.eventId);
    expect(new Webhook(SECRET).verify(received.body, verifyHeaders(received))).toMatchObject({
      type: 'message.received',
      data: { role: 'assistant' },
    });
    expect((await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries).toEqual([entry]);
    expect(
      await rejection(core.deliveries.test({ workspaceId: WS }, hook.id, { eventType: 'agent.exploded' as EventType })),
    ).toMatchObject({ code: 'validation_failed' });
  });

  it('a second rotation inside the overlap keeps the first replaced secret until its own expiry; three sign at most', async () => {
    const clock = new ManualClock();
    const core = createCore(memoryAdapters(), {
      clock,
      allowPrivateWebhookUrls: true,
      hostResolver: new StaticHostResolver(),
    });
    const hook = await core.webhooks.create(
      { workspaceId: WS },
      { url: 'https://hooks.example.com/a', events: ['agent.created'], secret: SECRET },
    );
    const t0 = clock.now();
    const day = 24 * 3600 * 1000;
    const first = await core.deliveries.rotateSecret({ workspaceId: WS }, hook.id);
    expect(first.previousSecretExpiresAt).toBe(new Date(t0 + day).toISOString());
    clock.advance(3600 * 1000);
    const second = await core.deliveries.rotateSecret({ workspaceId: WS }, hook.id);
    expect(second.previousSecretExpiresAt).toBe(new Date(t0 + 3600 * 1000 + day).toISOString());
    const stored = async () => (await core.storage.webhookEndpoints.get({ workspaceId: WS }, hook.id))!;
    // The original secret still signs until its own expiry, not the second rotation's.
    expect(signingSecrets(await stored(), clock.now())).toEqual([second.secret, first.secret, SECRET]);
    expect(signingSecrets(await stored(), t0 + day - 1)).toEqual([second.secret, first.secret, SECRET]);
    expect(signingSecrets(await stored(), t0 + day)).toEqual([second.secret, first.secret]);
    expect(signingSecrets(await stored(), t0 + 3600 * 1000 + day)).toEqual([second.secret]);
    clock.advance(3600 * 1000);
    const third = await core.deliveries.rotateSecret({ workspaceId: WS }, hook.id);
    // At most three sign at once: the one expiring first (the original) is dropped.
    expect(signingSecrets(await stored(), clock.now())).toEqual([third.secret, second.secret, first.secret]);
    // A PATCH of the secret replaces it at once: no overlap.
    await core.webhooks.update({ workspaceId: WS }, hook.id, { secret: 'a-patched-secret-of-some-length' });
    expect(signingSecrets(await stored(), clock.now())).toEqual(['a-patched-secret-of-some-length']);
  });

  it('rotates the secret: both verify during the overlap', async () => {
    const core = setup();
    const target = await receiver();
    const hook = await endpoint(core, target.url);
    const { secret } = await core.deliveries.rotateSecret({ workspaceId: WS }, hook.id);
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(SECRET);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(1);
    const received = target.received[0]!;
    expect(received.signature.split(' ')).toHaveLength(2);
    expect(() => new Webhook(secret).verify(received.body, verifyHeaders(received))).not.toThrow();
    expect(() => new Webhook(SECRET).verify(received.body, verifyHeaders(received))).not.toThrow();
    const stored = await core.storage.webhookEndpoints.get({ workspaceId: WS }, hook.id);
    expect(Date.parse(stored!.previousSecrets[0]!.expiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    const given = 'a-given-secret-of-some-length';
    expect(await core.deliveries.rotateSecret({ workspaceId: WS }, hook.id, { secret: given })).toEqual({
      secret: given,
      previousSecretExpiresAt: expect.any(String),
    });
    expect(
      await rejection(core.deliveries.rotateSecret({ workspaceId: WS }, hook.id, { secret: 'short' })),
    ).toMatchObject({ code: 'validation_failed' });
    expect(await rejection(core.deliveries.rotateSecret({ workspaceId: 'ws2' }, hook.id))).toBeInstanceOf(ParleyError);
  });
});
