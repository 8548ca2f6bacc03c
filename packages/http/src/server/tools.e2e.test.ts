/**
 * @module Agents that act, end to end on memory: MODELS → the real openai-compatible provider → a
 * fake Chat Completions server streaming tool-call deltas; webhook tools on a real receiver
 * verified with `standardwebhooks`; client tools and approvals answered over HTTP; SSE streams.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, undiciTransport, type Core } from '@parley/core';
import { startReceiver, StaticHostResolver, type Receiver } from '@parley/core/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { languageModels } from './language-models.js';
import { readModelsConfig } from '../cli/models-config.js';
import { serve } from './serve.js';
import { openEventStream, type EventStreamReader } from '../test-support/event-stream.js';
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi } from '../test-support/fake-openai.js';

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

type Json = Record<string, any>;

/** A server with a reply worker; `privateTargets: false` refuses loopback targets (resolving `tools.example.com` to 127.0.0.1 at connect time). */
async function start(options: { privateTargets?: boolean } = {}) {
  const problems: string[] = [];
  const { models } = readModelsConfig(
    {
      MODELS: JSON.stringify({
        'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' },
      }),
    },
    problems,
  );
  expect(problems).toEqual([]);
  const allowPrivate = options.privateTargets ?? true;
  const core: Core = createCore(memoryAdapters(), {
    // Registration sees a public address; the connection is made to what the transport resolves.
    hostResolver: new StaticHostResolver({ 'tools.example.com': ['93.184.216.34'] }),
    allowPrivateWebhookUrls: allowPrivate,
    webhookTransport: undiciTransport({
      allowPrivate,
      resolver: new StaticHostResolver({ 'tools.example.com': ['127.0.0.1'] }),
    }),
    models: languageModels(models),
    replyRetryDelaysMs: [10, 10],
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 }, replies: { pollMs: 50 } },
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, 'test-key-tools');
  const handle = await serve(createApp(core, { logLevel: 'silent' }), { port: 0, drainTimeoutMs: 300 });
  core.workers.start();
  const readers: EventStreamReader[] = [];
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${handle.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const running = {
    core,
    call,
    async stream(conversationId: string) {
      const reader = await openEventStream(`${handle.url}/api/conversations/${conversationId}/stream`, {
        authorization: `Bearer ${key}`,
      });
      readers.push(reader);
      return reader;
    },
    async conversation(tools: Json[], extra: Json = {}) {
      const agent = await call('POST', '/api/agents', {
        name: 'Ada',
        description: 'helper',
        model: 'local-llm',
        tools,
        ...extra,
      });
      expect(agent.status).toBe(201);
      const conversation = await call('POST', '/api/conversations', { agentId: agent.body.id });
      return { agent: agent.body, conversationId: conversation.body.id as string };
    },
    async messages(conversationId: string) {
      return (await call('GET', `/api/conversations/${conversationId}/messages?limit=100`)).body.messages as Json[];
    },
    async stop() {
      readers.forEach((reader) => reader.close());
      await core.workers.stop();
      await handle.close();
    },
  };
  cleanups.push(() => running.stop());
  return running;
}

const params = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const weather = () => ({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: params,
  kind: 'webhook',
  url: receiver.url,
});
/** Parley's own tool-call id: `call_` + a ULID (Crockford base32). */
const PARLEY_CALL_ID = /^call_[0-9A-HJKMNP-TV-Z]{26}$/;
const toolMessages = (request: ChatRequest) =>
  request.body.messages.filter((message) => message.role === 'tool') as Json[];

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('agents that act', () => {
  it('makes a two-step reply: the model calls a webhook tool, signed and verified by the receiver, and answers from its result', async () => {
    fake.script([
      {
        toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } }],
        usage: { prompt_tokens: 40, completion_tokens: 7 },
      },
      { deltas: ['Sunny', ' in Paris.'] },
    ]);
    receiver.answer = () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ forecast: 'sunny', celsius: 21 }),
    });
    const t = await start();
    const { agent, conversationId } = await t.conversation([weather()]);
    expect(agent.toolsSecret).toMatch(/^whsec_/);
    expect((await t.call('GET', `/api/agents/${agent.id}`)).body).not.toHaveProperty('toolsSecret');
    const stream = await t.stream(conversationId);
    const user = (
      await t.call('POST', `/api/conversations/${conversationId}/messages`, {
        role: 'user',
        content: 'Weather in Paris?',
      })
    ).body;

    const final = await stream.until(
      (event) =>
        event.event === 'message' &&
        JSON.parse(event.data).role === 'assistant' &&
        JSON.parse(event.data).toolCalls === null,
    );
    expect(JSON.parse(final.data)).toMatchObject({
      content: 'Sunny in Paris.',
      metadata: { reply: { inReplyTo: user.id, step: 2 } },
    });
    // The call has Parley's own id, not the provider's `call_w1`.
    const history = await t.messages(conversationId);
    const id = history[1]!.toolCalls[0].id as string;
    expect(id).toMatch(PARLEY_CALL_ID);

    // The receiver got one signed call that standardwebhooks verifies with the agent's secret.
    expect(receiver.received).toHaveLength(1);
    const received = receiver.received[0]!;
    const verified = new Webhook(agent.toolsSecret).verify(received.body, received.headers as Record<string, string>);
    expect(received.id).toBe(id);
    expect(verified).toEqual({
      toolCallId: id,
      name: 'get_weather',
      arguments: { city: 'Paris' },
      conversationId,
      agentId: agent.id,
    });

    // The model was given the tool and, in the second step, its call and result.
    expect((fake.requests[0]!.body.tools as Json[]).map((tool) => tool.function.name)).toEqual(['get_weather']);
    expect(toolMessages(fake.requests[1]!)).toEqual([
      { role: 'tool', tool_call_id: 'call00001', content: JSON.stringify({ forecast: 'sunny', celsius: 21 }) },
    ]);

    // History: user, assistant with toolCalls, tool result, final answer.
    expect(history.map((message) => [message.role, message.toolCalls?.[0]?.id ?? message.toolCallId])).toEqual([
      ['user', null],
      ['assistant', id],
      ['tool', id],
      ['assistant', null],
    ]);
    expect(history[1]!.toolCalls).toEqual([{ id, name: 'get_weather', arguments: { city: 'Paris' } }]);

    // The stream told of the call (deltas assembled) and its result.
    const toolCall = stream.received.find((event) => event.event === 'tool.call')!;
    expect(JSON.parse(toolCall.data)).toEqual({
      inReplyTo: user.id,
      toolCall: { id, name: 'get_weather', arguments: { city: 'Paris' } },
    });
    const toolResult = stream.received.find((event) => event.event === 'tool.result')!;
    expect(JSON.parse(toolResult.data)).toMatchObject({ role: 'tool', toolCallId: id });
    expect(toolResult.id).toBeTruthy();

    // Usage totals are the sum of the stored steps' usage.
    const steps = history.filter((message) => message.role === 'assistant');
    const sum = (kind: 'inputTokens' | 'outputTokens') =>
      steps.reduce((all, message) => all + message.metadata.reply.usage[kind], 0);
    expect(sum('inputTokens')).toBeGreaterThan(40);
    const usage = (await t.call('GET', '/api/usage?groupBy=agent')).body;
    expect(usage).toMatchObject({
      groupBy: 'agent',
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
      replies: 2,
    });
    expect(usage.totals).toEqual([
      { key: agent.id, inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), replies: 2 },
    ]);
  });

  it('pauses for a client tool, resumes once it is answered, and answering twice is 409', async () => {
    fake.script([
      { toolCalls: [{ id: 'call_c1', name: 'pick_date', arguments: {} }] },
      { deltas: ['Booked for Friday.'] },
    ]);
    const t = await start();
    const { conversationId } = await t.conversation([
      { name: 'pick_date', description: 'Ask the user for a date', parameters: { type: 'object' }, kind: 'client' },
    ]);
    const stream = await t.stream(conversationId);
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Book a table' });
    const action = await stream.until((event) => event.event === 'reply.requires_action');
    const id = JSON.parse(action.data).toolCalls[0].id as string;
    expect(id).toMatch(PARLEY_CALL_ID);
    expect(JSON.parse(action.data)).toMatchObject({
      conversationId,
      toolCalls: [{ id, name: 'pick_date', arguments: {}, kind: 'client', requiresApproval: false }],
    });
    const paused = (await t.call('GET', `/api/conversations/${conversationId}`)).body;
    expect(paused.pendingToolCalls).toEqual([
      { id, name: 'pick_date', arguments: {}, kind: 'client', requiresApproval: false },
    ]);
    const events = (await t.call('GET', '/api/events?type=reply.requires_action')).body.events as Json[];
    expect(events.map((event) => event.data.toolCalls[0].id)).toEqual([id]);

    const answer = { results: [{ toolCallId: id, output: { date: '2026-11-27' } }] };
    const answered = await t.call('POST', `/api/conversations/${conversationId}/tool-results`, answer, {
      'idempotency-key': 'answer-c1',
    });
    expect(answered).toEqual({ status: 202, body: { conversationId, pendingToolCalls: [] } });
    // A retry with the same Idempotency-Key gets the first answer again, not a 409.
    expect(
      await t.call('POST', `/api/conversations/${conversationId}/tool-results`, answer, {
        'idempotency-key': 'answer-c1',
      }),
    ).toEqual(answered);
    const again = await t.call('POST', `/api/conversations/${conversationId}/tool-results`, {
      results: [{ toolCallId: id, output: {} }],
    });
    expect(again.status).toBe(409);
    await stream.until((event) => event.event === 'message' && JSON.parse(event.data).content === 'Booked for Friday.');
    expect(toolMessages(fake.requests[1]!)).toEqual([
      { role: 'tool', tool_call_id: 'call00001', content: JSON.stringify({ date: '2026-11-27' }) },
    ]);
    expect((await t.call('GET', `/api/conversations/${conversationId}`)).body.pendingToolCalls).toEqual([]);
  });

  it('tells the model when an approval is rejected, without calling the tool', async () => {
    fake.script([
      { toolCalls: [{ id: 'call_a1', name: 'get_weather', arguments: { city: 'Oslo' } }] },
      { deltas: ['Understood, I will not check.'] },
    ]);
    const t = await start();
    const { conversationId } = await t.conversation([{ ...weather(), requiresApproval: true }]);
    await t.call('POST', `/api/conversations/${conversationId}/messages`, {
      role: 'user',
      content: 'Weather in Oslo?',
    });
    await until(
      () => t.call('GET', `/api/conversations/${conversationId}`),
      (response) => response.body.pendingToolCalls.length === 1,
    );
    // A stream opened after the pause is told of it too, after the stored step that asked.
    const late = await t.stream(conversationId);
    const action = await late.until((event) => event.event === 'reply.requires_action');
    const [user, step] = await t.messages(conversationId);
    const id = step!.toolCalls[0].id as string;
    expect(id).toMatch(PARLEY_CALL_ID);
    expect(JSON.parse(action.data)).toEqual({
      conversationId,
      inReplyTo: user!.id,
      toolCalls: [{ id, name: 'get_weather', arguments: { city: 'Oslo' }, kind: 'webhook', requiresApproval: true }],
    });
    expect(late.received.map((event) => event.event)).toEqual(['message', 'message', 'reply.requires_action']);
    // An output is no answer to an approval.
    expect(
      (
        await t.call('POST', `/api/conversations/${conversationId}/tool-results`, {
          results: [{ toolCallId: id, output: 1 }],
        })
      ).status,
    ).toBe(400);
    const rejected = await t.call('POST', `/api/conversations/${conversationId}/tool-results`, {
      results: [{ toolCallId: id, approved: false, reason: 'not now' }],
    });
    expect(rejected.status).toBe(202);
    const history = await until(
      () => t.messages(conversationId),
      (messages) => messages.at(-1)?.content === 'Understood, I will not check.',
    );
    expect(history.find((message) => message.role === 'tool')!.content).toBe(
      JSON.stringify({ error: 'rejected', reason: 'not now' }),
    );
    expect(toolMessages(fake.requests[1]!)[0]!.content).toBe(JSON.stringify({ error: 'rejected', reason: 'not now' }));
    expect(receiver.received).toHaveLength(0);
  });

  it('calls an approved webhook tool once the approval comes', async () => {
    fake.script([
      { toolCalls: [{ id: 'call_a2', name: 'get_weather', arguments: { city: 'Rome' } }] },
      { deltas: ['Warm.'] },
    ]);
    receiver.answer = () => ({ status: 200, body: JSON.stringify({ celsius: 25 }) });
    const t = await start();
    const { conversationId } = await t.conversation([{ ...weather(), requiresApproval: true }]);
    await t.call('POST', `/api/conversations/${conversationId}/messages`, {
      role: 'user',
      content: 'Weather in Rome?',
    });
    const paused = await until(
      () => t.call('GET', `/api/conversations/${conversationId}`),
      (response) => response.body.pendingToolCalls.length === 1,
    );
    expect(receiver.received).toHaveLength(0);
    const id = paused.body.pendingToolCalls[0].id as string;
    expect(
      (
        await t.call('POST', `/api/conversations/${conversationId}/tool-results`, {
          results: [{ toolCallId: id, approved: true }],
        })
      ).status,
    ).toBe(202);
    await until(
      () => t.messages(conversationId),
      (messages) => messages.at(-1)?.content === 'Warm.',
    );
    expect(receiver.received).toHaveLength(1);
    expect(toolMessages(fake.requests[1]!)[0]!.content).toBe(JSON.stringify({ celsius: 25 }));
  });

  it('gives each call its own id when the provider reuses call_0: an approved tool runs once, with its own result', async () => {
    // The provider numbers ids per response: every call is `call_0`.
    const calls: Record<string, Array<{ name: string; arguments: object }>> = {
      'Weather in Paris?': [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      'And in Rome?': [{ name: 'get_weather', arguments: { city: 'Rome' } }],
      'Book a table in Oslo': [{ name: 'book_table', arguments: { city: 'Oslo' } }],
    };
    fake.script((request) => {
      const last = request.body.messages.at(-1)!;
      if (last.role === 'tool') return { deltas: ['Done.'] };
      return { toolCalls: calls[last.content as string]!.map((call) => ({ id: 'call_0', ...call })) };
    });
    receiver.answer = (request) => {
      const {
        name,
        arguments: { city },
      } = JSON.parse(request.body) as Json;
      const result = name === 'book_table' ? { booked: city } : { forecast: `sunny in ${city}` };
      return { status: 200, body: JSON.stringify(result) };
    };
    const t = await start();
    const booking = { ...weather(), name: 'book_table', description: 'Books a table', requiresApproval: true };
    const { agent, conversationId } = await t.conversation([weather(), booking]);
    const stream = await t.stream(conversationId);
    const path = `/api/conversations/${conversationId}`;
    const isDone = (message: Json) => message.role === 'assistant' && message.content === 'Done.';
    const replied = (count: number) =>
      until(
        () => t.messages(conversationId),
        (messages) => messages.filter(isDone).length === count,
      );
    for (const [index, content] of ['Weather in Paris?', 'And in Rome?'].entries()) {
      await t.call('POST', `${path}/messages`, { role: 'user', content });
      await replied(index + 1);
    }
    await t.call('POST', `${path}/messages`, { role: 'user', content: 'Book a table in Oslo' });
    const paused = await until(
      () => t.call('GET', path),
      (response) => response.body.pendingToolCalls.length === 1,
    );
    const pending = paused.body.pendingToolCalls[0] as Json;
    expect(pending).toMatchObject({ name: 'book_table', arguments: { city: 'Oslo' }, requiresApproval: true });
    const approval = { results: [{ toolCallId: pending.id, approved: true }] };
    const approved = await t.call('POST', `${path}/tool-results`, approval);
    expect(approved).toEqual({ status: 202, body: { conversationId, pendingToolCalls: [] } });
    await replied(3);

    // Each tool was called once: the approved booking too.
    const called = receiver.received.map((request) => JSON.parse(request.body).name);
    expect(called).toEqual(['get_weather', 'get_weather', 'book_table']);

    // Every call has Parley's own id, unique, in the stored steps and their results.
    const history = await t.messages(conversationId);
    const stored = history.flatMap((message) => (message.toolCalls ?? []) as Json[]);
    const cities = [
      ['get_weather', 'Paris'],
      ['get_weather', 'Rome'],
      ['book_table', 'Oslo'],
    ];
    expect(stored.map((call) => [call.name, call.arguments.city])).toEqual(cities);
    const ids = stored.map((call) => call.id as string);
    for (const id of ids) expect(id).toMatch(PARLEY_CALL_ID);
    expect(new Set(ids).size).toBe(3);
    expect(ids[2]).toBe(pending.id);
    const tools = history.filter((message) => message.role === 'tool');
    const results = new Map(tools.map((message) => [message.toolCallId, message.content]));
    const expected = [{ forecast: 'sunny in Paris' }, { forecast: 'sunny in Rome' }, { booked: 'Oslo' }].map((result) =>
      JSON.stringify(result),
    );
    expect(ids.map((id) => results.get(id))).toEqual(expected);

    // Each webhook tool was called with its call's own id as `toolCallId` and `webhook-id`.
    const secret = agent.toolsSecret as string;
    const verified = receiver.received.map(
      (request) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Json,
    );
    const bodies = verified.map((body) => [body.toolCallId, body.name, body.arguments.city]);
    expect(bodies).toEqual(ids.map((id, index) => [id, ...cities[index]!]));
    expect(receiver.received.map((request) => request.id)).toEqual(ids);

    // Six model calls; the last got each call followed by its own result, numbered within the request
    // (ids every provider takes: Mistral's servers want exactly 9 letters or digits).
    expect(fake.requests).toHaveLength(6);
    const sent = (fake.requests.at(-1)!.body.messages as Json[]).map((message) =>
      message.role === 'tool'
        ? ['tool', message.tool_call_id, message.content]
        : [message.role, message.tool_calls?.map((call: Json) => call.id)[0]],
    );
    expect(sent).toEqual([
      ['user', undefined],
      ['assistant', 'call00001'],
      ['tool', 'call00001', expected[0]],
      ['assistant', undefined],
      ['user', undefined],
      ['assistant', 'call00002'],
      ['tool', 'call00002', expected[1]],
      ['assistant', undefined],
      ['user', undefined],
      ['assistant', 'call00003'],
      ['tool', 'call00003', expected[2]],
    ]);

    // The stream and the events name the calls by the same ids.
    const events = (type: string) =>
      stream.received.filter((event) => event.event === type).map((event) => JSON.parse(event.data) as Json);
    await stream.until(() => events('message').filter(isDone).length === 3);
    expect(events('tool.call').map((event) => event.toolCall.id)).toEqual(ids);
    const actions = (await t.call('GET', '/api/events?type=reply.requires_action')).body.events as Json[];
    expect(actions.map((event) => event.data.toolCalls.map((call: Json) => call.id))).toEqual([[pending.id]]);
  });

  it('never connects to a tool URL that resolves to a private address: the model gets the refusal as the result', async () => {
    fake.script([
      { toolCalls: [{ id: 'call_p1', name: 'get_weather', arguments: { city: 'Lima' } }] },
      { deltas: ['I could not check.'] },
    ]);
    const t = await start({ privateTargets: false });
    const url = new URL(receiver.url);
    const { conversationId } = await t.conversation([{ ...weather(), url: `http://tools.example.com:${url.port}/` }]);
    await t.call('POST', `/api/conversations/${conversationId}/messages`, {
      role: 'user',
      content: 'Weather in Lima?',
    });
    const history = await until(
      () => t.messages(conversationId),
      (messages) => messages.at(-1)?.content === 'I could not check.',
    );
    const result = JSON.parse(history.find((message) => message.role === 'tool')!.content) as Json;
    expect(result.error).toMatch(/loopback/i);
    expect(receiver.received).toHaveLength(0);
  });

  it('shows a tools secret only in the response that set it: never in a GET, a list, an event or a webhook; nor the answers of a paused reply', async () => {
    fake.script([
      {
        toolCalls: [
          { id: 'call_h1', name: 'pick_date', arguments: {} },
          { id: 'call_h2', name: 'pick_date', arguments: {} },
        ],
      },
    ]);
    const t = await start();
    expect((await t.call('POST', '/api/webhooks', { url: receiver.url, events: ['*'] })).status).toBe(201);
    const picker = {
      name: 'pick_date',
      description: 'Ask the user for a date',
      parameters: { type: 'object' },
      kind: 'client',
    };
    const { agent, conversationId } = await t.conversation([picker]);
    expect(agent).not.toHaveProperty('toolsSecret');
    // The agent first gets a webhook tool: the PATCH answers the secret generated for it, once.
    const tooled = (await t.call('PATCH', `/api/agents/${agent.id}`, { tools: [picker, weather()] })).body;
    expect(tooled.toolsSecret).toMatch(/^whsec_/);
    expect((await t.call('PATCH', `/api/agents/${agent.id}`, { tools: [weather(), picker] })).body).not.toHaveProperty(
      'toolsSecret',
    );
    const given = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect((await t.call('PATCH', `/api/agents/${agent.id}`, { toolsSecret: given })).body.toolsSecret).toBe(given);
    // A paused reply given one of its two answers keeps it hidden until it resumes.
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Book a table' });
    const paused = await until(
      () => t.call('GET', `/api/conversations/${conversationId}`),
      (response) => response.body.pendingToolCalls.length === 2,
    );
    const [first, second] = paused.body.pendingToolCalls.map((call: Json) => call.id as string);
    const output = 'hidden-output-7f3a9c';
    expect(
      (
        await t.call('POST', `/api/conversations/${conversationId}/tool-results`, {
          results: [{ toolCallId: first, output }],
        })
      ).status,
    ).toBe(202);
    const shown = [
      await t.call('GET', `/api/agents/${agent.id}`),
      await t.call('GET', '/api/agents'),
      await t.call('GET', `/api/conversations/${conversationId}`),
    ];
    expect(shown[2]!.body.pendingToolCalls.map((call: Json) => call.id)).toEqual([second]);
    await t.call('PATCH', `/api/conversations/${conversationId}`, { status: 'completed' });
    await t.call('DELETE', `/api/conversations/${conversationId}`);
    await t.call('DELETE', `/api/agents/${agent.id}`);
    const delivered = await until(
      async () => receiver.received.map((request) => request.body),
      (bodies) => bodies.some((body) => body.includes('"agent.deleted"')),
    );
    const events = (await t.call('GET', '/api/events?limit=100')).body.events as Json[];
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining([
        'agent.updated',
        'reply.requires_action',
        'conversation.completed',
        'conversation.deleted',
        'agent.deleted',
      ]),
    );
    const everything = JSON.stringify([shown.map((response) => response.body), events, delivered]);
    for (const hidden of [tooled.toolsSecret as string, given, 'toolsSecret', output, 'toolAnswers'])
      expect(everything).not.toContain(hidden);
  });

  it('refuses tools at registration: a loopback URL, an invalid JSON Schema, maxSteps out of range', async () => {
    const t = await start({ privateTargets: false });
    const refused = async (settings: Json) =>
      (
        await t.call('POST', '/api/agents', { name: 'A', description: '', model: 'local-llm', ...settings })
      ).body.error.details.issues.map((issue: Json) => issue.path);
    expect(await refused({ tools: [{ ...weather(), url: 'http://127.0.0.1:9/' }] })).toEqual(['tools.0.url']);
    expect(await refused({ tools: [{ ...weather(), parameters: { type: 'nope' } }] })).toEqual(['tools.0.parameters']);
    expect(await refused({ maxSteps: 33 })).toEqual(['maxSteps']);
    expect((await t.call('POST', `/api/conversations/conv_nope/messages`, { role: 'tool', content: 'x' })).status).toBe(
      400,
    );
  });
});
