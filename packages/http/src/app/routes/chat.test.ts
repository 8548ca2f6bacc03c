/**
 * @module `POST /api/chat` and `GET /api/chat/:id/stream` read by the AI SDK's own client: the
 * `ai` package's `DefaultChatTransport` (which validates every chunk with `uiMessageChunkSchema`)
 * and `readUIMessageStream`, against agents replying through the real openai-compatible provider
 * and a fake Chat Completions server on loopback; on memory, Redis and PostgreSQL.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { postgresAdapters } from '@parley/adapter-postgres';
import {
  createTestDatabase,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
} from '@parley/adapter-postgres/testing';
import { redisAdapters } from '@parley/adapter-redis';
import { undiciTransport, type Adapters } from '@parley/core';
import type { ConversationFeed } from '@parley/core/adapter';
import { startReceiver, type Receiver } from '@parley/core/testing';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readModelsConfig } from '../../cli/models-config.js';
import { languageModels } from '../../server/language-models.js';
import { startFakeOpenAi, type ChatAnswer, type FakeOpenAi } from '../../test-support/fake-openai.js';
import { harness, json, type Harness } from '../../test-support/harness.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../../test-support/redis.js';

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
afterEach(() => {
  receiver.received.length = 0;
  receiver.answer = () => 200;
});

/** A webhook tool on the receiver. */
const weatherTool = () => ({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  kind: 'webhook',
  url: receiver.url,
});

/** A backend the chat runs on: a fresh adapter bundle per harness, and what to remove afterwards. */
interface Backend {
  adapters(): Promise<Adapters>;
  cleanup(): Promise<void>;
}

const BASE = 'http://parley.test';

/**
 * A harness whose agents reply with `local-llm` (the fake server), with its workers running. A
 * chat stream quiet for `keepAliveMs` (default 1 s) checks that a reply is still under way.
 */
async function start(backend: Backend, keepAliveMs = 1_000): Promise<Harness & { stop(): Promise<void> }> {
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
  const adapters = await backend.adapters();
  const h = await harness({ replies: { keepAliveMs } }, adapters, {
    models: languageModels(models),
    // The tools' receiver listens on loopback.
    allowPrivateWebhookUrls: true,
    webhookTransport: undiciTransport({ allowPrivate: true }),
    replyRetryDelaysMs: [10, 10],
    workers: { relay: { pollMs: 20 }, delivery: { pollMs: 50 }, replies: { pollMs: 20 } },
  });
  h.core.workers.start();
  return {
    ...h,
    async stop() {
      await h.core.workers.stop();
      await adapters.close?.();
    },
  };
}

/** A `DefaultChatTransport` that reaches the harness's app, as a browser's would reach the server. */
function transport(h: Harness, key = h.key) {
  return new DefaultChatTransport({
    api: `${BASE}/api/chat`,
    headers: { Authorization: `Bearer ${key}` },
    fetch: async (input, init) => h.app.request(String(input), init),
  });
}

/** A user message as `useChat` makes it. */
function userMessage(text: string, id = `client-${Math.random().toString(36).slice(2)}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** Sends the chat's messages as `useChat` does on `sendMessage` (or after answering tool calls). */
function send(h: Harness, conversationId: string, chat: UIMessage[]): Promise<ReadableStream<UIMessageChunk>> {
  return transport(h).sendMessages({
    chatId: conversationId,
    messages: chat,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
}

/** Every chunk of `stream`. */
async function collect(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Every chunk of `stream`, and the UI message `readUIMessageStream` builds from them (continuing `message`). */
async function read(
  stream: ReadableStream<UIMessageChunk>,
  continued?: UIMessage,
): Promise<{ chunks: UIMessageChunk[]; message: UIMessage }> {
  const [mine, theirs] = stream.tee();
  const chunks: UIMessageChunk[] = [];
  const collected = (async () => {
    for await (const chunk of mine) chunks.push(chunk);
  })();
  let message: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({
    stream: theirs,
    terminateOnError: true,
    ...(continued && { message: continued }),
  }))
    message = snapshot;
  await collected;
  return { chunks, message: message! };
}

async function conversationOf(h: Harness, agent: Record<string, unknown> = {}): Promise<string> {
  const created = await h.call('POST', '/api/agents', {
    json: { name: 'Ada', description: 'helper', model: 'local-llm', ...agent },
  });
  expect(created.status).toBe(201);
  const conversation = await h.call('POST', '/api/conversations', { json: { agentId: (await json(created)).id } });
  return (await json(conversation)).id as string;
}

async function messages(h: Harness, conversationId: string): Promise<Array<Record<string, any>>> {
  return (await json(await h.call('GET', `/api/conversations/${conversationId}/messages?limit=100`))).messages;
}

function chatTests(name: string, backend: () => Backend) {
  /**
   * Checks the chunks' types. A shared backend's feed is at most once (ports/conversation-feed.ts):
   * under load a delta's signal may be dropped and the stream then reads the step as stored, so
   * there a run of text deltas is compared as one; memory's count is exact. The text itself is
   * checked by each test.
   */
  function expectTypes(chunks: UIMessageChunk[], expected: string[]): void {
    const compared = (types: string[]) =>
      name === 'memory' ? types : types.filter((type, i) => !(type === 'text-delta' && types[i - 1] === 'text-delta'));
    expect(compared(chunks.map((chunk) => chunk.type))).toEqual(compared(expected));
  }

  describe(`the AI SDK chat protocol on ${name}`, () => {
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      h = await start(backend());
    });
    afterAll(async () => {
      await h?.stop();
    });
    afterEach(() => fake.script([{}]));

    it('streams a text reply as text deltas of one step, stores the user message and the reply', async () => {
      fake.script([{ deltas: ['Blue light', ' scatters', ' most.'] }]);
      const conversationId = await conversationOf(h);
      // The whole chat, as useChat sends it: only the last message is new.
      const earlier: UIMessage = { id: 'a0', role: 'assistant', parts: [{ type: 'text', text: 'Hello!' }] };
      const { chunks, message } = await read(
        await send(h, conversationId, [earlier, userMessage('Why is the sky blue?')]),
      );
      expectTypes(chunks, [
        'start',
        'start-step',
        'text-start',
        'text-delta',
        'text-delta',
        'text-delta',
        'text-end',
        'finish-step',
        'finish',
      ]);
      expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
      expect(message.role).toBe('assistant');
      expect(message.parts).toEqual([
        { type: 'step-start' },
        { type: 'text', text: 'Blue light scatters most.', state: 'done' },
      ]);
      const stored = await messages(h, conversationId);
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Why is the sky blue?'],
        ['assistant', 'Blue light scatters most.'],
      ]);
      expect(stored[1]!.metadata.reply.inReplyTo).toBe(stored[0]!.id);
    });

    it('streams a webhook tool call and its result as tool parts, then the answer as the next step', async () => {
      fake.script([
        { toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: { city: 'Paris' } }] },
        { deltas: ['Sunny', ' in Paris.'] },
      ]);
      receiver.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ forecast: 'sunny' }),
      });
      const conversationId = await conversationOf(h, { tools: [weatherTool()] });
      const { chunks, message } = await read(await send(h, conversationId, [userMessage('Weather in Paris?')]));
      expectTypes(chunks, [
        'start',
        'start-step',
        'tool-input-available',
        'tool-output-available',
        'finish-step',
        'start-step',
        'text-start',
        'text-delta',
        'text-delta',
        'text-end',
        'finish-step',
        'finish',
      ]);
      const stored = await messages(h, conversationId);
      const callId = stored[1]!.toolCalls[0].id as string;
      expect(callId).toMatch(/^call_/);
      expect(message.parts).toEqual([
        { type: 'step-start' },
        {
          type: 'tool-get_weather',
          toolCallId: callId,
          state: 'output-available',
          input: { city: 'Paris' },
          output: { forecast: 'sunny' },
        },
        { type: 'step-start' },
        { type: 'text', text: 'Sunny in Paris.', state: 'done' },
      ]);
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    });

    it('pauses for an approval with the call visible, then goes on when the chat answers it', async () => {
      fake.script([
        { toolCalls: [{ id: 'call_0', name: 'book_table', arguments: { time: '20:00' } }] },
        { deltas: ['Booked.'] },
      ]);
      receiver.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"booked":true}',
      });
      const conversationId = await conversationOf(h, {
        tools: [{ ...weatherTool(), name: 'book_table', requiresApproval: true }],
      });
      const user = userMessage('A table at eight, please.');
      const paused = await read(await send(h, conversationId, [user]));
      expectTypes(paused.chunks, [
        'start',
        'start-step',
        'tool-input-available',
        'tool-approval-request',
        'finish-step',
        'finish',
      ]);
      expect(paused.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
      const [, part] = paused.message.parts as Array<Record<string, any>>;
      expect(part).toMatchObject({ type: 'tool-book_table', state: 'approval-requested', input: { time: '20:00' } });
      const pending = (await json(await h.call('GET', `/api/conversations/${conversationId}`))).pendingToolCalls;
      expect(pending.map((call: { id: string }) => call.id)).toEqual([part!.toolCallId]);
      expect(receiver.received).toHaveLength(0);

      // What useChat's addToolApprovalResponse leaves in the message, sent back by sendAutomaticallyWhen.
      const approved: UIMessage = {
        ...paused.message,
        parts: paused.message.parts.map((p) =>
          p === part ? { ...part, state: 'approval-responded', approval: { id: part.approval.id, approved: true } } : p,
        ) as UIMessage['parts'],
      };
      const stream = await send(h, conversationId, [user, approved]);
      const { chunks, message } = await read(stream, approved);
      expectTypes(chunks, [
        'start',
        'tool-output-available',
        'start-step',
        'text-start',
        'text-delta',
        'text-end',
        'finish-step',
        'finish',
      ]);
      expect(receiver.received).toHaveLength(1);
      expect(message.id).toBe(paused.message.id);
      expect(message.parts).toEqual([
        { type: 'step-start' },
        {
          ...part,
          state: 'output-available',
          approval: { id: part!.approval.id, approved: true },
          output: { booked: true },
        },
        { type: 'step-start' },
        { type: 'text', text: 'Booked.', state: 'done' },
      ]);
    });

    it('ends with an error chunk when the reply is given up', async () => {
      fake.script([{ status: 500, errorMessage: 'model overloaded' }]);
      const conversationId = await conversationOf(h);
      const chunks = await collect(await send(h, conversationId, [userMessage('Hello?')]));
      expectTypes(chunks, ['start', 'error']);
      expect((chunks[1] as { errorText: string }).errorText).toMatch(/failed 3 times.*model overloaded/);
      expect(fake.requests).toHaveLength(3);
    });

    it('resumes a reply: its stored step replayed from start (messageId the first step), the rest as it comes', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      fake.script([
        { toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: { city: 'Oslo' } }] },
        { deltas: ['Cold', ' in Oslo.'], hold: held },
      ]);
      receiver.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"celsius":-3}',
      });
      const conversationId = await conversationOf(h, { tools: [weatherTool()] });
      await h.call('POST', `/api/conversations/${conversationId}/messages`, {
        json: { role: 'user', content: 'Oslo?' },
      });
      // The first step is stored and its tool called; the second model call waits.
      await expect.poll(() => fake.requests.length, { timeout: 10_000 }).toBe(2);
      const stream = await transport(h).reconnectToStream({ chatId: conversationId });
      expect(stream).not.toBeNull();
      release();
      const { chunks, message } = await read(stream!);
      const stored = await messages(h, conversationId);
      expect(chunks[0]).toEqual({ type: 'start', messageId: stored[1]!.id });
      expectTypes(chunks, [
        'start',
        'start-step',
        'tool-input-available',
        'tool-output-available',
        'finish-step',
        'start-step',
        'text-start',
        'text-delta',
        'text-end',
        'finish-step',
        'finish',
      ]);
      expect(message.id).toBe(stored[1]!.id);
      expect(message.parts.at(-1)).toEqual({ type: 'text', text: 'Cold in Oslo.', state: 'done' });
    });

    it('resumes a reply caught in its first step: that step once stored, the next one live, delta by delta', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      fake.script([
        { toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: { city: 'Rome' } }], hold: held },
        { deltas: ['Warm', ' in', ' Rome.'], delayMs: 20 },
      ]);
      receiver.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"celsius":24}',
      });
      const conversationId = await conversationOf(h, { tools: [weatherTool()] });
      await h.call('POST', `/api/conversations/${conversationId}/messages`, {
        json: { role: 'user', content: 'Rome?' },
      });
      await expect.poll(() => fake.requests.length, { timeout: 10_000 }).toBe(1);
      const stream = await transport(h).reconnectToStream({ chatId: conversationId });
      release();
      const { chunks, message } = await read(stream!);
      expect(chunks[0]).toEqual({ type: 'start' });
      expectTypes(chunks, [
        'start',
        'start-step',
        'tool-input-available',
        'tool-output-available',
        'finish-step',
        'start-step',
        'text-start',
        'text-delta',
        'text-delta',
        'text-delta',
        'text-end',
        'finish-step',
        'finish',
      ]);
      expect(message.parts.at(-1)).toEqual({ type: 'text', text: 'Warm in Rome.', state: 'done' });
    });

    it('answers 204 to a resume when no reply is under way', async () => {
      const conversationId = await conversationOf(h);
      expect(await transport(h).reconnectToStream({ chatId: conversationId })).toBeNull();
      fake.script([{ deltas: ['Done.'] }]);
      await collect(await send(h, conversationId, [userMessage('Hi')]));
      const resumed = await h.call('GET', `/api/chat/${conversationId}/stream`);
      expect(resumed.status).toBe(204);
      expect(await resumed.text()).toBe('');
      // A reply given up is not under way either.
      fake.script([{ status: 503 }]);
      await collect(await send(h, conversationId, [userMessage('Again')]));
      await expect.poll(async () => (await h.call('GET', `/api/chat/${conversationId}/stream`)).status).toBe(204);
      await h.call('PATCH', `/api/conversations/${conversationId}`, { json: { status: 'completed' } });
      expect((await h.call('GET', `/api/chat/${conversationId}/stream`)).status).toBe(204);
    });

    it('streams under an Idempotency-Key as it is written; a repeat gets the kept stream and stores nothing', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      fake.script([{ deltas: ['Kept', ' once.'], hold: held }]);
      const conversationId = await conversationOf(h);
      const body = { id: conversationId, messages: [userMessage('Once?')], trigger: 'submit-message' };
      const post = () => h.call('POST', '/api/chat', { json: body, headers: { 'Idempotency-Key': 'chat-once' } });
      const first = await post();
      expect(first.status).toBe(200);
      expect(first.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
      // The start chunk arrives while the model has not answered yet: nothing waits for the whole stream.
      const reader = first.body!.pipeThrough(new TextDecoderStream()).getReader();
      expect((await reader.read()).value).toBe('data: {"type":"start"}\n\n');
      expect((await post()).status).toBe(409);
      release();
      let text = '';
      for (let part = await reader.read(); !part.done; part = await reader.read()) text += part.value;
      expect(text).toContain('"delta":" once."');
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      await expect
        .poll(async () => {
          const response = await post();
          return {
            status: response.status,
            replayed: response.headers.get('Idempotent-Replayed'),
            text: await response.text(),
          };
        })
        .toMatchObject({ status: 200, replayed: 'true' });
      const again = await post();
      expect(await again.text()).toBe(`data: {"type":"start"}\n\n${text}`);
      expect((await messages(h, conversationId)).map((m) => m.role)).toEqual(['user', 'assistant']);
    });

    it("answers the service's errors before a stream starts: 400, 404, 409, 403", async () => {
      const conversationId = await conversationOf(h);
      const post = (body: unknown, key?: string) => h.call('POST', '/api/chat', { json: body, ...(key && { key }) });
      const user = userMessage('Hi');
      for (const body of [
        {},
        { id: conversationId, messages: [] },
        // AI SDK 4's shape: content instead of parts.
        { id: conversationId, messages: [{ id: 'm1', role: 'user', content: 'Hi' }] },
        { id: conversationId, messages: [user], trigger: 'regenerate-message', messageId: 'x' },
        {
          id: conversationId,
          messages: [{ ...user, parts: [{ type: 'file', url: 'data:,', mediaType: 'text/plain' }] }],
        },
        { id: conversationId, messages: [{ ...user, role: 'system' }] },
      ]) {
        const response = await post(body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect((await json(response)).error.code).toBe('validation_failed');
      }
      expect((await post({ id: conversationId, messages: [{ ...user, role: 'assistant' }] })).status).toBe(409);

      const other = await h.call('POST', '/api/agents', {
        key: h.otherKey,
        json: { name: 'B', description: '', model: 'local-llm' },
      });
      const foreign = await h.call('POST', '/api/conversations', {
        key: h.otherKey,
        json: { agentId: (await json(other)).id },
      });
      const foreignId = (await json(foreign)).id;
      const notFound = await post({ id: foreignId, messages: [user], trigger: 'submit-message' });
      expect(notFound.status).toBe(404);
      expect((await json(notFound)).error.code).toBe('not_found');
      expect((await h.call('GET', `/api/chat/${foreignId}/stream`)).status).toBe(404);

      await h.call('PATCH', `/api/conversations/${conversationId}`, { json: { status: 'completed' } });
      const completed = await post({ id: conversationId, messages: [user], trigger: 'submit-message' });
      expect(completed.status).toBe(409);
      expect((await json(completed)).error.code).toBe('conflict');

      const readOnly = await h.keyWith(['conversations:read']);
      expect((await post({ id: conversationId, messages: [user] }, readOnly)).status).toBe(403);
      expect((await h.call('GET', `/api/chat/${conversationId}/stream`, { key: readOnly })).status).toBe(204);
      // Nothing was stored by the refused requests.
      expect(await messages(h, conversationId)).toEqual([]);
    });
  });
}

chatTests('memory', () => ({ adapters: async () => memoryAdapters(), cleanup: async () => {} }));

describe('a chat stream whose reply ends unseen', () => {
  it('ends with an error chunk once no reply is under way, when the feed lost the reply.failed signal', async () => {
    // Live signals are best effort (Redis pub/sub drops them across a reconnect): this feed loses every reply.failed.
    const h = await start(
      {
        adapters: async () => {
          const adapters = memoryAdapters();
          const feed = adapters.conversationFeed;
          const conversationFeed: ConversationFeed = {
            publish: (scope, conversationId, signal) =>
              signal.type === 'reply.failed' ? Promise.resolve() : feed.publish(scope, conversationId, signal),
            subscribe: (scope, conversationId, listener) => feed.subscribe(scope, conversationId, listener),
          };
          return { ...adapters, conversationFeed };
        },
        cleanup: async () => {},
      },
      150,
    );
    try {
      fake.script([{ status: 500 }]);
      const conversationId = await conversationOf(h);
      const chunks = await collect(await send(h, conversationId, [userMessage('Hello?')]));
      expect(chunks).toEqual([
        { type: 'start' },
        { type: 'error', errorText: 'The reply ended without being stored.' },
      ]);
      expect(fake.requests).toHaveLength(3);
    } finally {
      await h.stop();
    }
  });
});

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());
describeRedis('on Redis', () => {
  let client: Redis;
  const prefixes: string[] = [];
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client, prefix);
    await client.quit();
  });
  chatTests('Redis', () => ({
    adapters: async () => {
      const prefix = uniquePrefix('chat');
      prefixes.push(prefix);
      return redisAdapters({ client, prefix });
    },
    cleanup: async () => {},
  }));
});

describeIfPostgres({ describe, it }, await probePostgres())('on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });
  chatTests('PostgreSQL', () => ({
    adapters: async () => {
      database ??= await createTestDatabase();
      const adapters = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
      await adapters.ready();
      return adapters;
    },
    cleanup: async () => {},
  }));
});
