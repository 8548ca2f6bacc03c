/**
 * @module Strings servers produce that PostgreSQL cannot store (docs/errors.md#strings): U+0000 and
 * unpaired surrogates in a model's streamed reply and tool-call arguments (a fake Chat Completions
 * server on loopback), a webhook tool's result, a provider's error message, and a webhook
 * receiver's response body. Each is stored with U+FFFD in their place, on memory and PostgreSQL
 * (issue: on PostgreSQL the reply could never be stored and was given up, the delivery attempt
 * was never logged).
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { postgresAdapters } from '@parley/adapter-postgres';
import { createTestDatabase, describeIfPostgres, probePostgres } from '@parley/adapter-postgres/testing';
import { createCore, undiciTransport, type Adapters } from '@parley/core';
import { startReceiver, type Receiver } from '@parley/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { readModelsConfig } from '../cli/models-config.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { languageModels } from './language-models.js';
import { serve } from './serve.js';

type Json = Record<string, any>;

/** U+0000, a lone high and a lone low surrogate, as a server sends them (JSON escapes). */
const BAD = 'a\u0000b\ud800c\udc00d';
/** {@link BAD} as stored: each replaced by U+FFFD. */
const REPAIRED = 'a\ufffdb\ufffdc\ufffdd';
/** An agent answered by the fake provider. */
const AGENT = { name: 'Ada', description: 'helper', model: 'local-llm' };

let fake: FakeOpenAi;
let receiver: Receiver;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await fake.close();
  await receiver.close();
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  receiver.received.length = 0;
  receiver.answer = () => 200;
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A server with its workers over `adapters`: the fake provider as `local-llm`, loopback targets allowed. */
async function start(adapters: Adapters) {
  await adapters.ready();
  const problems: string[] = [];
  const model = { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' };
  const config = { 'local-llm': model };
  const { models } = readModelsConfig({ MODELS: JSON.stringify(config) }, problems);
  expect(problems).toEqual([]);
  const core = createCore(adapters, {
    allowPrivateWebhookUrls: true,
    webhookTransport: undiciTransport({ allowPrivate: true }),
    models: languageModels(models),
    replyRetryDelaysMs: [10, 10],
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 }, replies: { pollMs: 50 } },
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, 'test-key-server-strings');
  const handle = await serve(createApp(core, { logLevel: 'silent' }), { port: 0, drainTimeoutMs: 300 });
  core.workers.start();
  cleanups.push(async () => {
    await core.workers.stop();
    await handle.close();
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${handle.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const messages = async (conversationId: string) =>
    (await call('GET', `/api/conversations/${conversationId}/messages?limit=100`)).body.messages as Json[];
  const events = async (type: string) =>
    (await call('GET', `/api/events?type=${type}&limit=100`)).body.events as Json[];
  return { call, messages, events };
}

function serverStringTests(open: () => Promise<Adapters>): void {
  it('a reply, its tool-call arguments, a webhook tool result: stored with U+FFFD, no reply.failed', async () => {
    const t = await start(await open());
    fake.script([
      {
        // A pair split across two deltas is kept whole.
        deltas: ['Looking ', BAD, ' \ud83d', '\ude00'],
        toolCalls: [{ id: 'call_0', name: 'lookup', arguments: { query: BAD, [`k${BAD}`]: [BAD] } }],
      },
      { deltas: [`Found ${BAD}`] },
    ]);
    const result = JSON.stringify({ answer: BAD, [BAD]: 1 });
    receiver.answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: result });
    const parameters = { type: 'object', properties: { query: { type: 'string' } } };
    const tool = { name: 'lookup', description: 'Looks it up', parameters, kind: 'webhook', url: receiver.url };
    const agent = await t.call('POST', '/api/agents', { ...AGENT, tools: [tool] });
    expect(agent.status).toBe(201);
    const conversationId = (await t.call('POST', '/api/conversations', { agentId: agent.body.id })).body.id as string;
    const messagesPath = `/api/conversations/${conversationId}/messages`;
    const user = await t.call('POST', messagesPath, { role: 'user', content: 'Look it up' });
    expect(user.status).toBe(201);

    const history = await until(
      () => t.messages(conversationId),
      (list) => list.length >= 4,
    );
    expect(history.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Look it up'],
      ['assistant', `Looking ${REPAIRED} \ud83d\ude00`],
      ['tool', JSON.stringify({ answer: REPAIRED, [REPAIRED]: 1 })],
      ['assistant', `Found ${REPAIRED}`],
    ]);
    const args = { query: REPAIRED, [`k${REPAIRED}`]: [REPAIRED] };
    expect(history[1]!.toolCalls).toEqual([{ id: expect.any(String), name: 'lookup', arguments: args }]);
    // The tool was called with the repaired arguments.
    expect(JSON.parse(receiver.received[0]!.body).arguments).toEqual(args);
    expect(await t.events('reply.failed')).toEqual([]);
  });

  it("a client tool's call waiting for its output: the paused conversation holds U+FFFD", async () => {
    const t = await start(await open());
    fake.script([{ toolCalls: [{ id: 'call_0', name: 'pick_date', arguments: { hint: BAD, [BAD]: [BAD] } }] }]);
    const tool = { name: 'pick_date', description: 'Asks for a date', parameters: { type: 'object' }, kind: 'client' };
    const agent = await t.call('POST', '/api/agents', { ...AGENT, tools: [tool] });
    const conversationId = (await t.call('POST', '/api/conversations', { agentId: agent.body.id })).body.id as string;
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'When?' });

    const paused = await until(
      async () => (await t.call('GET', `/api/conversations/${conversationId}`)).body,
      (conversation) => conversation.pendingToolCalls?.length === 1,
    );
    const args = { hint: REPAIRED, [REPAIRED]: [REPAIRED] };
    expect(paused.pendingToolCalls).toMatchObject([{ name: 'pick_date', arguments: args }]);
    expect(await t.events('reply.failed')).toEqual([]);
  });

  it("a provider's error message: reply.failed is stored with U+FFFD", async () => {
    const t = await start(await open());
    fake.script([{ status: 400, errorMessage: `Bad request ${BAD}` }]);
    const agent = await t.call('POST', '/api/agents', AGENT);
    const conversationId = (await t.call('POST', '/api/conversations', { agentId: agent.body.id })).body.id as string;
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Hello' });

    const [failed] = await until(
      () => t.events('reply.failed'),
      (list) => list.length > 0,
    );
    expect(failed!.data.error).toContain(`HTTP 400 from ${new URL(fake.baseURL).host}: Bad request ${REPAIRED}`);
  });

  it("a webhook receiver's response body with NUL bytes: the attempt is logged, the excerpt with U+FFFD", async () => {
    const t = await start(await open());
    receiver.answer = () => ({ status: 200, body: 'ok\u0000\u0000done' });
    const hook = await t.call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] });
    expect(hook.status).toBe(201);
    await t.call('POST', '/api/agents', AGENT);

    const deliveries = await until(
      async () => (await t.call('GET', `/api/webhooks/${hook.body.id}/deliveries`)).body.deliveries as Json[],
      (list) => list.length > 0,
    );
    expect(deliveries).toMatchObject([{ eventType: 'agent.created', status: 200, responseBody: 'ok\ufffd\ufffddone' }]);
    expect(receiver.received).toHaveLength(1);
  });
}

describe('strings servers produce, on memory', () => {
  serverStringTests(async () => memoryAdapters());
});

describeIfPostgres({ describe, it }, await probePostgres())('strings servers produce, on PostgreSQL', () => {
  serverStringTests(async () => {
    const database = await createTestDatabase();
    const adapters = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
    cleanups.unshift(async () => {
      await adapters.close();
      await database.drop();
    });
    return adapters;
  });
});
