/** @module The client against a real listening Parley server: every operation, errors and history paging. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import { StaticHostResolver } from '@parley/core/testing';
import { createApp } from '@parley/http';
import { serve, type ServerHandle } from '@parley/http/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '@parley/core/testing';
import { createParleyClient, isParleyApiError, ParleyApiError, type ParleyClient } from './index.js';

let server: ServerHandle;
let core: Core;
let parley: ParleyClient;
/** `METHOD /path` of every request the client sent, to prove every operation was exercised. */
const sent: string[] = [];

async function rejection(promise: Promise<unknown>): Promise<ParleyApiError> {
  const outcome = await promise.then(
    () => new Error('Expected the call to fail.'),
    (error: unknown) => error,
  );
  if (outcome instanceof ParleyApiError) return outcome;
  throw outcome;
}

function clientWith(apiKey: string, headers?: Record<string, string>): ParleyClient {
  return createParleyClient({
    baseUrl: `${server.url}/`,
    apiKey,
    ...(headers ? { headers } : {}),
    fetch: (request) => {
      sent.push(`${request.method} ${new URL(request.url).pathname}`);
      return fetch(request);
    },
  });
}

beforeAll(async () => {
  // No network in tests: webhook host names do not resolve (and are accepted).
  // Private targets allowed: test events go to a receiver on loopback.
  core = createCore(memoryAdapters(), { hostResolver: new StaticHostResolver(), allowPrivateWebhookUrls: true });
  server = await serve(createApp(core, { logLevel: 'silent' }), { port: 0 });
  parley = clientWith((await core.apiKeys.issue({ workspaceId: 'acme', plan: 'pro' })).key);
});
afterAll(() => server.close());

describe('@parley/client against a running server', () => {
  it('creates, reads, lists, updates and deletes agents', async () => {
    const agent = await parley.agents.create({
      name: 'Ada',
      description: 'Billing',
      model: 'modelA-4',
      configuration: { tone: 'warm' },
    });
    expect(agent).toMatchObject({
      id: expect.stringMatching(/^agt_/),
      status: 'active',
      systemPrompt: null,
      configuration: { tone: 'warm' },
    });
    expect(await parley.agents.get(agent.id)).toEqual(agent);
    await parley.agents.create({ name: 'Grace', description: '', model: 'modelB-3' });
    expect(await parley.agents.list({ limit: 1 })).toMatchObject({
      total: 2,
      page: 1,
      limit: 1,
      agents: [{ name: 'Grace' }],
    });
    expect(await parley.agents.update(agent.id, { temperature: 0.5, status: 'inactive' })).toMatchObject({
      temperature: 0.5,
      status: 'inactive',
    });
    expect(await parley.agents.delete(agent.id)).toEqual({ success: true, message: expect.any(String) });
    const missing = await rejection(parley.agents.get(agent.id));
    expect(missing).toMatchObject({ status: 404, code: 'not_found', requestId: expect.any(String) });
    expect(isParleyApiError(missing, 'not_found')).toBe(true);
  });

  it('starts, lists, reads, completes and deletes conversations; sends and reads messages; pages through the whole history', async () => {
    const agent = await parley.agents.create({ name: 'Ada', description: 'Billing', model: 'modelA-4' });
    const conversation = await parley.conversations.create({
      agentId: agent.id,
      userId: 'u1',
      metadata: { plan: 'gold' },
    });
    expect(conversation).toMatchObject({ agentId: agent.id, userId: 'u1', status: 'active' });
    expect(await parley.conversations.get(conversation.id)).toEqual(conversation);
    expect((await parley.conversations.list({ agentId: agent.id, userId: 'u1' })).conversations).toEqual([
      conversation,
    ]);

    const sentMessages = [];
    for (let n = 1; n <= 7; n++)
      sentMessages.push(
        await parley.messages.send(conversation.id, { role: n % 2 ? 'user' : 'assistant', content: `#${n}` }),
      );
    const first = await parley.messages.history(conversation.id, { limit: 3 });
    expect(first.messages.map((m) => m.content)).toEqual(['#5', '#6', '#7']);
    expect(first).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });

    const requestsBefore = sent.length;
    const all = [];
    for await (const message of parley.messages.iterate(conversation.id, { pageSize: 3 })) all.push(message);
    expect(all).toEqual([...sentMessages].reverse());
    // 7 messages in pages of 3: three requests, the last without nextCursor.
    expect(sent.length - requestsBefore).toBe(3);

    // The iterator fetches only as far as the loop reads.
    const early = sent.length;
    for await (const message of parley.messages.iterate(conversation.id, { pageSize: 3 }))
      if (message.content === '#6') break;
    expect(sent.length - early).toBe(1);

    expect(await parley.messages.get(conversation.id, sentMessages[2]!.id)).toEqual(sentMessages[2]);
    const last = sentMessages.at(-1)!.createdAt;
    expect(await parley.conversations.get(conversation.id)).toEqual({
      ...conversation,
      lastMessageAt: last,
      updatedAt: last,
    });

    expect(await parley.conversations.update(conversation.id, { status: 'completed' })).toMatchObject({
      status: 'completed',
      lastMessageAt: last,
    });
    const closed = await rejection(parley.messages.send(conversation.id, { role: 'user', content: 'late' }));
    expect(closed).toMatchObject({ status: 409, code: 'conflict' });
    expect(await parley.conversations.delete(conversation.id)).toMatchObject({ success: true });
    expect(await rejection(parley.messages.get(conversation.id, sentMessages[0]!.id))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('registers, lists, reads, updates and deletes webhook endpoints', async () => {
    const endpoint = await parley.webhooks.create({ url: 'https://example.com/hooks', events: ['message.sent'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const { secret: _secret, ...stored } = endpoint;
    expect(await parley.webhooks.get(endpoint.id)).toEqual(stored);
    expect((await parley.webhooks.list()).webhooks).toEqual([stored]);
    expect(await parley.webhooks.update(endpoint.id, { enabled: false })).toMatchObject({ enabled: false });
    expect(await parley.webhooks.delete(endpoint.id)).toMatchObject({ success: true });
  });

  it('reads the deliveries log, tests, retries, recovers and rotates secrets; reads the event log', async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = await parley.webhooks.create({ url: receiver.url, events: ['agent.created'] });
      const tested = await parley.webhooks.test(endpoint.id, { eventType: 'agent.created' });
      expect(tested).toMatchObject({ eventId: expect.stringMatching(/^evt_test_/), trigger: 'test', status: 200 });
      expect(await parley.webhooks.deliveries(endpoint.id, { limit: 5 })).toEqual({
        deliveries: [tested],
        hasMore: false,
      });
      // A test event is not in the event log, so it cannot be retried.
      expect(await rejection(parley.webhooks.retryDelivery(endpoint.id, tested.id))).toMatchObject({ status: 404 });
      expect(
        await parley.webhooks.recover(endpoint.id, { since: new Date(Date.now() + 60_000).toISOString() }),
      ).toEqual({ events: 0 });
      const rotated = await parley.webhooks.rotateSecret(endpoint.id);
      expect(rotated).toEqual({
        secret: expect.stringMatching(/^whsec_/),
        previousSecretExpiresAt: expect.any(String),
      });
      expect(tested.nextAttemptAt).toBeNull(); // a test is one attempt
      const everything = await parley.webhooks.create({ url: receiver.url, events: ['*'] });
      expect(everything.events).toEqual(['*']);
      const agent = await parley.agents.create({ name: 'Evented', description: '', model: 'modelA-4' });
      const { events } = await parley.events.list({ type: 'agent.created' });
      const event = events.find((each) => (each.data as { id: string }).id === agent.id)!;
      expect(await parley.events.get(event.id)).toEqual(event);
    } finally {
      await receiver.close();
    }
  });

  it('lists, adds and deletes sandbox plants, whose flat errors become http_error', async () => {
    expect(await parley.plants.list({ limit: 2 })).toHaveLength(2);
    expect(await parley.plants.create({ id: 100, name: 'Fern', tag: 'fern' })).toMatchObject({ id: 100, name: 'Fern' });
    await expect(parley.plants.delete(100)).resolves.toBeUndefined();
    const gone = await rejection(parley.plants.delete(100));
    expect(gone).toMatchObject({
      status: 404,
      code: 'http_error',
      message: expect.stringContaining('100'),
      body: { error: 404 },
    });
  });

  it('sends idempotencyKey as Idempotency-Key: a retried create returns the first agent; another body with the key is idempotency_key_reused', async () => {
    const input = { name: 'Once', description: 'Created once', model: 'modelA-4' } as const;
    const first = await parley.agents.create(input, { idempotencyKey: 'client-retry-1' });
    const retried = await parley.agents.create(input, { idempotencyKey: 'client-retry-1' });
    expect(retried).toEqual(first);
    const error = await rejection(
      parley.agents.create({ ...input, name: 'Twice' }, { idempotencyKey: 'client-retry-1' }),
    );
    expect(error.status).toBe(422);
    expect(isParleyApiError(error, 'idempotency_key_reused')).toBe(true);
  });

  it("asks for a reply (409 without a configured model) and reads a completed conversation's stream to its end", async () => {
    const agent = await parley.agents.create({ name: 'Ada', description: 'Billing', model: 'modelA-4' });
    const conversation = await parley.conversations.create({ agentId: agent.id });
    await parley.messages.send(conversation.id, { role: 'user', content: 'Hello' });
    expect(await rejection(parley.replies.request(conversation.id))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await parley.replies.cancel(conversation.id)).toEqual({ cancelled: [] }); // nothing to stop
    await parley.conversations.update(conversation.id, { status: 'completed' });
    const text = await new Response(await parley.replies.stream(conversation.id)).text();
    expect(text).toContain('event: message');
    expect(text).toContain('event: conversation.completed');
    expect(await rejection(parley.replies.stream(conversation.id, { after: 'forged' }))).toMatchObject({
      status: 400,
      code: 'invalid_request',
    });
  });

  it('defines tools (the tools secret shown once), answers tool calls (409 when none waits) and reads usage', async () => {
    const agent = await parley.agents.create({
      name: 'Tooling',
      description: '',
      model: 'modelA-4',
      tools: [
        {
          name: 'lookup',
          description: 'Look up',
          kind: 'webhook',
          url: 'https://tools.example.com/',
          parameters: { type: 'object' },
        },
      ],
    });
    expect(agent.toolsSecret).toMatch(/^whsec_/);
    expect(await parley.agents.get(agent.id)).not.toHaveProperty('toolsSecret');
    const conversation = await parley.conversations.create({ agentId: agent.id });
    expect(conversation.pendingToolCalls).toEqual([]);
    const conflict = await rejection(
      parley.replies.submitToolResults(conversation.id, { results: [{ toolCallId: 'call_1', approved: true }] }),
    );
    expect(conflict).toMatchObject({ status: 409, code: 'conflict' });
    expect(await parley.usage({ groupBy: 'agent' })).toMatchObject({
      groupBy: 'agent',
      totals: [],
      inputTokens: 0,
      outputTokens: 0,
      replies: 0,
    });
    expect(await parley.key()).toEqual({
      keyId: expect.stringMatching(/^key_/),
      workspaceId: 'acme',
      plan: 'pro',
      scopes: ['*'],
      limitPerHour: null,
    });
  });

  it('sends ifMatch as If-Match: a stale ETag is precondition_failed (412) and changes nothing; the current one writes', async () => {
    const agent = await parley.agents.create({ name: 'Edited', description: 'By two editors', model: 'modelA-4' });
    const read = await parley.raw.GET('/api/agents/{id}', { params: { path: { id: agent.id } } });
    const etag = read.response.headers.get('ETag')!;
    await parley.agents.update(agent.id, { name: 'First editor' });
    const error = await rejection(parley.agents.update(agent.id, { name: 'Second editor' }, { ifMatch: etag }));
    expect(error.status).toBe(412);
    expect(isParleyApiError(error, 'precondition_failed')).toBe(true);
    expect((await parley.agents.get(agent.id)).name).toBe('First editor');
    expect(await rejection(parley.agents.delete(agent.id, { ifMatch: etag }))).toMatchObject({ status: 412 });
    const current = error.details!.etag!;
    expect((await parley.agents.update(agent.id, { name: 'Second editor' }, { ifMatch: current })).name).toBe(
      'Second editor',
    );
    expect(await parley.agents.delete(agent.id, { ifMatch: '*' })).toMatchObject({ success: true });
  });

  it('reads the probes and the OpenAPI document', async () => {
    expect(await parley.health()).toEqual({ status: 'ok' });
    expect(await parley.ready()).toEqual({ status: 'ok' });
    expect(await parley.openApiDocument()).toMatchObject({ openapi: '3.1.0' });
  });

  it('reports 400 validation details, 401, 403 with the scope, and 429 with Retry-After', async () => {
    const invalid = await rejection(parley.agents.create({ name: '', description: 'x', model: 'modelA-4' }));
    expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(invalid.details?.issues).toEqual([{ path: 'name', message: expect.any(String) }]);
    expect(await rejection(parley.agents.list({ limit: 500 }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });

    const stranger = clientWith('not-a-key-of-this-server', { 'X-Request-Id': 'req-from-the-client' });
    expect(await rejection(stranger.agents.list())).toMatchObject({
      status: 401,
      code: 'unauthorized',
      requestId: 'req-from-the-client',
    });

    const reader = clientWith(
      (await core.apiKeys.issue({ workspaceId: 'acme', plan: 'pro', scopes: ['agents:read'] })).key,
    );
    const forbidden = await rejection(reader.webhooks.list());
    expect(forbidden).toMatchObject({ status: 403, code: 'forbidden', details: { requiredScope: 'webhooks:read' } });

    const tiny = clientWith(
      (await core.apiKeys.issue({ workspaceId: 'tiny', plan: 'enterprise', limitPerHour: 1 })).key,
    );
    await tiny.agents.list();
    const limited = await rejection(tiny.agents.list());
    expect(limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: expect.any(Number) });
  });

  it('exercised every operation of the document', async () => {
    const document = (await parley.openApiDocument()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => [method.toUpperCase(), path] as const),
    );
    // The reference page and its script are for browsers; the client has no methods for them. The
    // AI SDK chat routes are for `useChat`'s transport, which routes/chat.test.ts drives.
    const missing = operations
      .filter(([, path]) => !path.startsWith('/docs') && !path.startsWith('/api/chat'))
      .filter(([method, path]) => {
        const pattern = new RegExp(`^${method} ${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
        return !sent.some((request) => pattern.test(request));
      });
    expect(missing).toEqual([]);
  });
});
