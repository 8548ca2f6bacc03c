/**
 * @module A reply's spans on the memory adapters, exported to the SDK's in-memory exporter: the
 * GenAI names and attributes, parentage from the request to the model, tool and webhook spans, and
 * no content unless asked for (docs/observability.md#traces).
 */
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { memoryAdapters } from '@parley/adapter-memory';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type LanguageModel, type ReplyOutcome } from '../index.js';
import { startReceiver, type Receiver } from '../testing/receiver.js';
import { scriptedModel, type ScriptedTurn } from '../testing/scripted-model.js';

// What a host's SDK does at start: one context manager for the process. The tracer provider is
// not registered: Parley takes the tracer it is given.
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => context.disable());

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer: Tracer = provider.getTracer('test');
afterEach(() => exporter.reset());

const SECRET_TEXT = 'What is the weather in Oslo, my secret city?';

/** A scripted model that names its provider and the model that answered, as `aiSdkModel` does. */
function acmeModel(turns: ScriptedTurn[]): LanguageModel {
  const scripted = scriptedModel(turns);
  return {
    provider: 'acme',
    modelId: 'acme-1',
    async *stream(request) {
      for await (const part of scripted.stream(request))
        yield part.type === 'finish' ? { ...part, responseModel: 'acme-1-2026' } : part;
    },
  };
}

async function setup(turns: ScriptedTurn[], options: { traceMessageContent?: boolean } = {}) {
  const tool = await startReceiver();
  tool.answer = () => ({ status: 200, body: JSON.stringify({ temperature: 'twenty-one degrees' }) });
  const hooks = await startReceiver();
  const adapters = memoryAdapters();
  const outcomes: ReplyOutcome[] = [];
  const core = createCore(adapters, {
    models: { tiny: acmeModel(turns) },
    tracer,
    allowPrivateWebhookUrls: true,
    replyRetryDelaysMs: [1, 1],
    workers: {
      relay: { pollMs: 20 },
      delivery: { pollMs: 20 },
      replies: { pollMs: 20 },
      onReplyOutcome: (outcome) => outcomes.push(outcome),
    },
    ...options,
  });
  const scope = { workspaceId: 'ws1' };
  await core.webhooks.create(scope, { url: hooks.url, events: ['message.received'] });
  const agent = await core.agents.create(scope, {
    name: 'Ada',
    description: '',
    model: 'tiny',
    autoReply: false,
    tools: [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: { type: 'object' },
        kind: 'webhook',
        url: tool.url,
      },
    ],
  });
  const conversation = await core.conversations.create(scope, { agentId: agent.id, userId: 'u1' });
  core.workers.start();
  const settle = async (count: number) => {
    for (let i = 0; i < 1_000 && outcomes.length < count; i += 1) await new Promise((done) => setTimeout(done, 10));
    expect(outcomes).toHaveLength(count);
  };
  const close = async (...receivers: Receiver[]) => {
    await core.workers.stop();
    await adapters.close();
    await Promise.all([tool.close(), hooks.close(), ...receivers.map((receiver) => receiver.close())]);
  };
  return { core, scope, agent, conversation, tool, hooks, outcomes, settle, close };
}

/** Sends `text` and asks for a reply inside a span `POST message`, as the HTTP layer's span would be. */
function askInRequest(t: Awaited<ReturnType<typeof setup>>, text: string) {
  return tracer.startActiveSpan('POST message', async (span) => {
    try {
      await t.core.conversations.sendMessage(t.scope, t.conversation.id, { role: 'user', content: text });
      await t.core.replies.request(t.scope, t.conversation.id);
      return span.spanContext();
    } finally {
      span.end();
    }
  });
}

const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const one = (name: string) => {
  const spans = named(name);
  expect(spans, name).toHaveLength(1);
  return spans[0]!;
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const ms = ([seconds, nanos]: [number, number]) => seconds * 1e3 + nanos / 1e6;
const allValues = () => exporter.getFinishedSpans().flatMap((span) => Object.values(span.attributes).map(String));

const weatherCall: ScriptedTurn = {
  toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Oslo' } }],
  usage: { inputTokens: 12, outputTokens: 5 },
};
const answer: ScriptedTurn = { deltas: ['It is ', 'mild.'], usage: { inputTokens: 30, outputTokens: 2 } };

describe('reply spans', () => {
  it('invoke_agent → chat → execute_tool → chat, in the trace of the request that asked, with the GenAI attributes', async () => {
    const t = await setup([weatherCall, answer]);
    const request = await askInRequest(t, SECRET_TEXT);
    await t.settle(1);
    await t.hooks.waitFor(2);

    const invoke = one('invoke_agent Ada');
    expect(invoke.spanContext().traceId).toBe(request.traceId);
    expect(parentOf(invoke)).toBe(request.spanId);
    expect(invoke.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'acme',
      'gen_ai.request.model': 'acme-1',
      'gen_ai.agent.id': t.agent.id,
      'gen_ai.agent.name': 'Ada',
      'gen_ai.conversation.id': t.conversation.id,
      'parley.reply.outcome': 'stored',
    });

    const chats = named('chat acme-1').sort(
      (a, b) => Number(a.attributes['parley.reply.step']) - Number(b.attributes['parley.reply.step']),
    );
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(parentOf(chat)).toBe(invoke.spanContext().spanId);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'acme',
        'gen_ai.request.model': 'acme-1',
        'gen_ai.response.model': 'acme-1-2026',
        'gen_ai.conversation.id': t.conversation.id,
        'gen_ai.agent.id': t.agent.id,
        'gen_ai.agent.name': 'Ada',
      });
    }
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(chats[1]!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.response.finish_reasons': ['stop'],
    });

    const tool = one('execute_tool get_weather');
    expect(parentOf(tool)).toBe(invoke.spanContext().spanId);
    const history = (await t.core.conversations.history(t.scope, t.conversation.id, { limit: 10 })).messages;
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': history[1]!.toolCalls![0]!.id,
      'gen_ai.tool.type': 'extension',
      'parley.tool.kind': 'webhook',
    });
    // The tool ran between the two model calls.
    expect(ms(tool.startTime)).toBeGreaterThanOrEqual(ms(chats[0]!.endTime));
    expect(ms(tool.endTime)).toBeLessThanOrEqual(ms(chats[1]!.startTime));

    // Nothing the user, the model or the tool said, and no secret.
    const values = allValues();
    for (const text of [SECRET_TEXT, 'Oslo', 'twenty-one', 'mild']) expect(values.join('\n')).not.toContain(text);
    const keys = exporter.getFinishedSpans().flatMap((span) => Object.keys(span.attributes));
    expect(keys.filter((key) => /messages|arguments|result|instructions/.test(key))).toEqual([]);
    await t.close();
  });

  it('records the prompt, the output, tool arguments and results when content is asked for', async () => {
    const t = await setup([weatherCall, answer], { traceMessageContent: true });
    await askInRequest(t, SECRET_TEXT);
    await t.settle(1);
    const [first, second] = named('chat acme-1').sort(
      (a, b) => Number(a.attributes['parley.reply.step']) - Number(b.attributes['parley.reply.step']),
    );
    expect(JSON.parse(String(first!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: SECRET_TEXT }] },
    ]);
    expect(JSON.parse(String(second!.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'It is mild.' }], finish_reason: 'stop' },
    ]);
    const tool = one('execute_tool get_weather');
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({ city: 'Oslo' });
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.result']))).toEqual({
      temperature: 'twenty-one degrees',
    });
    await t.close();
  });

  it('marks each failed try of the model as an error, and the reply as failed', async () => {
    const t = await setup([{ error: new TypeError('provider down') }]);
    await askInRequest(t, SECRET_TEXT);
    await t.settle(1);
    const chats = named('chat acme-1');
    expect(chats.map((chat) => chat.attributes['parley.model.attempt']).sort()).toEqual([1, 2, 3]);
    for (const chat of chats) {
      expect(chat.status.code).toBe(SpanStatusCode.ERROR);
      expect(chat.attributes['error.type']).toBe('TypeError');
    }
    expect(one('invoke_agent Ada').attributes['parley.reply.outcome']).toBe('failed');
    await t.close();
  });

  it('a reply paused for a client tool resumes in the trace of the answer, linked to the one that paused', async () => {
    const t = await setup([{ toolCalls: [{ id: 'c1', name: 'ask_user', arguments: {} }] }, answer]);
    await t.core.agents.update(t.scope, t.agent.id, {
      tools: [{ name: 'ask_user', description: 'Ask the user', parameters: { type: 'object' }, kind: 'client' }],
    });
    await askInRequest(t, SECRET_TEXT);
    await t.settle(1);
    expect(t.outcomes).toEqual(['paused']);
    const [pending] = (await t.core.conversations.get(t.scope, t.conversation.id)).pendingToolCalls;
    // The hidden trace context is in no response.
    expect(JSON.stringify(await t.core.conversations.get(t.scope, t.conversation.id))).not.toContain('TraceContext');
    const answered = await tracer.startActiveSpan('POST tool-results', async (span) => {
      await t.core.replies.submitToolResults(t.scope, t.conversation.id, {
        results: [{ toolCallId: pending!.id, output: 'Oslo' }],
      });
      span.end();
      return span.spanContext();
    });
    await t.settle(2);
    const [first, resumed] = named('invoke_agent Ada').sort((a, b) => ms(a.startTime) - ms(b.startTime));
    expect(first!.attributes['parley.reply.outcome']).toBe('paused');
    expect(resumed!.spanContext().traceId).toBe(answered.traceId);
    expect(parentOf(resumed!)).toBe(answered.spanId);
    expect(resumed!.links.map((link) => link.context.spanId)).toEqual([first!.spanContext().spanId]);
    const tool = one('execute_tool ask_user');
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.type': 'function', 'parley.tool.kind': 'client' });
    expect(parentOf(tool)).toBe(resumed!.spanContext().spanId);
    await t.close();
  });

  it('makes no span without a tracer or SDK, and replies as before', async () => {
    // The API's global tracer with no provider registered: a no-op.
    const adapters = memoryAdapters();
    const core = createCore(adapters, { models: { tiny: acmeModel([answer]) } });
    const agent = await core.agents.create({ workspaceId: 'ws1' }, { name: 'Ada', description: '', model: 'tiny' });
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'Hi' });
    await core.replies.request({ workspaceId: 'ws1' }, conversation.id);
    const leased = await adapters.replyQueue.lease(1_000, { models: ['tiny'] });
    expect(await core.replies.generate(leased!.job, new AbortController().signal)).toBe('stored');
    expect(exporter.getFinishedSpans()).toEqual([]);
    await adapters.close();
  });
});
