/**
 * @module End to end: `parley serve` (memory storage, its in-process worker) delivering to real
 * receivers on loopback — every event type signed, filtering, retries, 410, recover, rotation,
 * a hanging receiver, and SIGTERM finishing the attempt in flight.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startReceiver, verifyHeaders, type Receiver } from '@parley/core/testing';
import { apiFor } from '../test-support/api-client.js';
import { runCli, startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const SECRET = `whsec_${Buffer.alloc(32, 11).toString('base64')}`;
const ALL_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'conversation.started',
  'conversation.completed',
  'message.sent',
  'message.received',
];
const workspaces = ['types', 'filter', 'retry', 'gone', 'rotate', 'hang', 'drain'] as const;
const keyOf = (workspace: string) => `e2e-delivery-key-${workspace}-0123456789`;
const env = {
  API_KEYS: JSON.stringify(workspaces.map((workspace) => ({ key: keyOf(workspace), workspace, plan: 'pro' }))),
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_DELAYS: '0.2,0.2',
};
const agentInput = { name: 'Ada', description: 'Answers', model: 'modelA-4' };

let server: ServerProcess;
const receivers: Receiver[] = [];
beforeAll(async () => {
  server = await startServerProcess(env);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await server?.stop();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

const api = (workspace: (typeof workspaces)[number]) => apiFor(server.base, keyOf(workspace));

describe('parley serve delivers webhooks (memory storage)', () => {
  it('delivers every event type, each verifying with standardwebhooks', async () => {
    const call = api('types');
    const target = await receiver();
    await call('POST', '/api/webhooks', { url: target.url, events: ALL_TYPES, secret: SECRET }, 201);
    const agent = await call('POST', '/api/agents', agentInput, 201);
    await call('PATCH', `/api/agents/${agent.id}`, { name: 'Ada 2' }, 200);
    const conversation = await call('POST', '/api/conversations', { agentId: agent.id }, 201);
    await call('POST', `/api/conversations/${conversation.id}/messages`, { role: 'user', content: 'Hi' }, 201);
    await call('POST', `/api/conversations/${conversation.id}/messages`, { role: 'assistant', content: 'Hello' }, 201);
    await call('PATCH', `/api/conversations/${conversation.id}`, { status: 'completed' }, 200);
    await call('DELETE', `/api/agents/${agent.id}`, undefined, 200);
    await target.waitFor(7);
    const verifier = new Webhook(SECRET);
    const verified = target.received.map(
      (received) => verifier.verify(received.body, verifyHeaders(received)) as { type: string },
    );
    expect(verified.map((payload) => payload.type).sort()).toEqual([...ALL_TYPES].sort());
    // The events API shows the same events under the same ids.
    const { events } = await call('GET', '/api/events?limit=100', undefined, 200);
    expect(events.map((event: { id: string }) => event.id).sort()).toEqual(
      target.received.map((received) => received.id).sort(),
    );
  });

  it('sends each endpoint only what it subscribes to', async () => {
    const call = api('filter');
    const [agents, messages] = await Promise.all([receiver(), receiver()]);
    await call('POST', '/api/webhooks', { url: agents.url, events: ['agent.created'] }, 201);
    await call('POST', '/api/webhooks', { url: messages.url, events: ['message.sent', 'message.received'] }, 201);
    const agent = await call('POST', '/api/agents', agentInput, 201);
    const conversation = await call('POST', '/api/conversations', { agentId: agent.id }, 201);
    await call('POST', `/api/conversations/${conversation.id}/messages`, { role: 'system', content: 'Be brief' }, 201);
    await Promise.all([agents.waitFor(1), messages.waitFor(1)]);
    await call('POST', '/api/agents', agentInput, 201);
    await agents.waitFor(2);
    expect(agents.received.map((received) => received.json.type)).toEqual(['agent.created', 'agent.created']);
    expect(messages.received.map((received) => received.json.type)).toEqual(['message.sent']);
  });

  it('a receiver failing twice gets 3 attempts with one webhook-id, and the log shows 3 entries', async () => {
    const call = api('retry');
    const target = await receiver();
    target.answer = (_request, index) => (index < 2 ? 503 : 200);
    const hook = await call('POST', '/api/webhooks', { url: target.url, events: ['agent.created'] }, 201);
    await call('POST', '/api/agents', agentInput, 201);
    await target.waitFor(3);
    expect(new Set(target.received.map((received) => received.id)).size).toBe(1);
    await eventually(
      async () => (await call('GET', `/api/webhooks/${hook.id}/deliveries`, undefined, 200)).deliveries.length === 3,
    );
    const { deliveries } = await call('GET', `/api/webhooks/${hook.id}/deliveries`, undefined, 200);
    expect(deliveries.map((entry: { attempt: number; status: number }) => [entry.attempt, entry.status])).toEqual([
      [3, 200],
      [2, 503],
      [1, 503],
    ]);
  });

  it('410 disables the endpoint; recover re-sends what it missed once enabled again', async () => {
    const call = api('gone');
    const target = await receiver();
    target.answer = () => 410;
    const hook = await call('POST', '/api/webhooks', { url: target.url, events: ['agent.created'] }, 201);
    const since = new Date().toISOString();
    await call('POST', '/api/agents', agentInput, 201);
    await target.waitFor(1);
    await eventually(async () => (await call('GET', `/api/webhooks/${hook.id}`, undefined, 200)).enabled === false);
    expect(await call('GET', `/api/webhooks/${hook.id}`, undefined, 200)).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });
    const missed = await call('POST', '/api/agents', agentInput, 201);
    target.answer = () => 200;
    await call('PATCH', `/api/webhooks/${hook.id}`, { enabled: true }, 200);
    expect(await call('GET', `/api/webhooks/${hook.id}`, undefined, 200)).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    expect(await call('POST', `/api/webhooks/${hook.id}/recover`, { since }, 202)).toEqual({ events: 2 });
    await target.waitFor(3);
    expect(target.received.slice(1).map((received) => received.json.data.id)).toContain(missed.id);
  });

  it('rotate-secret: both secrets verify during the overlap', async () => {
    const call = api('rotate');
    const target = await receiver();
    const hook = await call(
      'POST',
      '/api/webhooks',
      { url: target.url, events: ['agent.created'], secret: SECRET },
      201,
    );
    const { secret } = await call('POST', `/api/webhooks/${hook.id}/rotate-secret`, {}, 200);
    await call('POST', '/api/agents', agentInput, 201);
    await target.waitFor(1);
    const received = target.received[0]!;
    for (const key of [SECRET, secret])
      expect(() => new Webhook(key).verify(received.body, verifyHeaders(received))).not.toThrow();
  });

  it('a receiver that hangs does not stall other endpoints', async () => {
    const call = api('hang');
    const [hung, healthy] = await Promise.all([receiver(), receiver()]);
    hung.answer = () => 'hang';
    await call('POST', '/api/webhooks', { url: hung.url, events: ['agent.created'] }, 201);
    await call('POST', '/api/webhooks', { url: healthy.url, events: ['agent.created'] }, 201);
    await Promise.all(Array.from({ length: 40 }, () => call('POST', '/api/agents', agentInput, 201)));
    await healthy.waitFor(40, 10_000);
    expect(hung.hanging()).toBeGreaterThan(0);
  });

  it('SIGTERM lets the attempt in flight finish before exiting', async () => {
    const own = await startServerProcess(env);
    const call = apiFor(own.base, keyOf('drain'));
    const target = await receiver();
    let answered = false;
    target.answer = () => 'hang';
    await call('POST', '/api/webhooks', { url: target.url, events: ['agent.created'] }, 201);
    await call('POST', '/api/agents', agentInput, 201);
    await target.waitFor(1);
    const exited = own.stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(own.child.exitCode).toBeNull();
    // Answer the hanging request now: the worker reads it, then the process exits cleanly.
    answered = await target.release(200);
    expect(answered).toBe(true);
    expect(await exited).toBe(0);
  });

  it('parley worker refuses memory storage with a clear message', async () => {
    const result = await runCli(['worker'], { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /parley worker needs DATABASE_URL, REDIS_URL or REDIS_CLUSTER_NODES: with memory storage/,
    );
  });
});
