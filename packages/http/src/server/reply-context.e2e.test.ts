/**
 * @module A reply's prompt fits the model (docs/replies-and-streams.md#context-that-fits-the-model)
 * end to end on memory: `MODELS` with a small `contextWindow` → the real openai-compatible provider
 * → a fake Chat Completions server that records what it was sent; SSE over a real listening server.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { StaticHostResolver } from '@parley/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { readModelsConfig } from '../cli/models-config.js';
import { openEventStream, type EventStreamReader } from '../test-support/event-stream.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { languageModels } from './language-models.js';
import { serve } from './serve.js';

let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(() => fake.close());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The server on memory, its model `small` with a context window of `contextWindow` tokens. */
async function start(contextWindow: number) {
  const problems: string[] = [];
  const { models } = readModelsConfig(
    {
      MODELS: JSON.stringify({
        small: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', contextWindow },
      }),
    },
    problems,
  );
  expect(problems).toEqual([]);
  const core = createCore(memoryAdapters(), {
    hostResolver: new StaticHostResolver(),
    models: languageModels(models),
    replyRetryDelaysMs: [10, 10],
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 }, replies: { pollMs: 50 } },
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, 'test-key-context');
  const handle = await serve(createApp(core, { logLevel: 'silent' }), { port: 0, drainTimeoutMs: 300 });
  core.workers.start();
  const readers: EventStreamReader[] = [];
  cleanups.push(async () => {
    readers.forEach((reader) => reader.close());
    await core.workers.stop();
    await handle.close();
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${handle.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const agent = await call('POST', '/api/agents', {
    name: 'Ada',
    description: '',
    model: 'small',
    systemPrompt: 'Answer briefly.',
    maxTokens: 200,
    autoReply: false,
  });
  expect(agent.status).toBe(201);
  const conversationId = (await call('POST', '/api/conversations', { agentId: agent.body.id })).body.id as string;
  const stream = await openEventStream(`${handle.url}/api/conversations/${conversationId}/stream`, {
    authorization: `Bearer ${key}`,
  });
  readers.push(stream);
  const post = async (role: string, content: string) => {
    const posted = await call('POST', `/api/conversations/${conversationId}/messages`, { role, content });
    expect(posted.status).toBe(201);
    return posted.body.id as string;
  };
  return { call, conversationId, stream, post };
}

/** About `n` tokens of text (o200k: one per repeated word). */
const words = (n: number, word = 'apple') => Array.from({ length: n }, () => word).join(' ');
const data = (event: { data: string }) => JSON.parse(event.data) as Record<string, any>;

describe('a prompt that fits the model', () => {
  it('leaves the oldest whole turns out, tells the stream and records it on the stored reply', async () => {
    fake.script([{ deltas: ['Short answer.'] }]);
    const t = await start(1_024);
    // Six old turns of about 150 tokens each, then the question: 1 024 − 200 (maxTokens) leave room
    // for the question and four or five turns, not all six.
    for (let turn = 1; turn <= 6; turn += 1) {
      await t.post('user', `Question ${turn}: ${words(70)}`);
      await t.post('assistant', `Answer ${turn}: ${words(70, 'pear')}`);
    }
    const question = await t.post('user', 'And now, in one word?');
    expect((await t.call('POST', `/api/conversations/${t.conversationId}/reply`)).status).toBe(202);
    const trimmed = await t.stream.until((event) => event.event === 'context.trimmed', 20_000);
    const reply = await t.stream.until((event) => event.event === 'message' && data(event).role === 'assistant');

    const sent = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(sent[0]).toEqual({ role: 'system', content: 'Answer briefly.' });
    // What was sent: the newest whole turns, oldest first, starting with a user message.
    expect(sent[1]?.role).toBe('user');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'And now, in one word?' });
    const kept = sent.length - 1;
    expect(kept).toBeLessThan(13);
    expect(kept % 2).toBe(1);
    expect(sent[1]?.content.startsWith(`Question ${(13 - kept) / 2 + 1}:`)).toBe(true);

    const context = { messages: kept, tokens: expect.any(Number), trimmed: 13 - kept };
    expect(data(trimmed)).toEqual({ inReplyTo: question, ...context });
    expect(data(trimmed).tokens).toBeLessThanOrEqual(1_024 - 200);
    expect(data(trimmed).tokens).toBeGreaterThan((kept - 1) * 70);
    expect(data(reply).metadata.reply).toMatchObject({
      inReplyTo: question,
      finishReason: 'stop',
      context: { ...context, tokens: data(trimmed).tokens },
    });
    // The whole history is still stored.
    const history = await t.call('GET', `/api/conversations/${t.conversationId}/messages?limit=100`);
    expect(history.body.messages).toHaveLength(14);
  });

  it('records the context without a context.trimmed event when everything fits', async () => {
    fake.script([{ deltas: ['Hi.'] }]);
    const t = await start(8_192);
    const question = await t.post('user', 'Hello');
    await t.call('POST', `/api/conversations/${t.conversationId}/reply`);
    const reply = await t.stream.until((event) => event.event === 'message' && data(event).role === 'assistant');
    expect(data(reply).metadata.reply).toMatchObject({
      inReplyTo: question,
      context: { messages: 1, tokens: expect.any(Number), trimmed: 0 },
    });
    expect(t.stream.received.map((event) => event.event)).not.toContain('context.trimmed');
    expect(fake.requests).toHaveLength(1);
  });

  it('a message larger than the window fails the reply with reply.failed saying so, without calling the model', async () => {
    fake.script([{ deltas: ['never'] }]);
    const t = await start(1_024);
    const question = await t.post('user', words(5_000));
    await t.call('POST', `/api/conversations/${t.conversationId}/reply`);
    const failed = await t.stream.until((event) => event.event === 'reply.failed', 20_000);
    expect(data(failed)).toEqual({
      inReplyTo: question,
      error: expect.stringMatching(/newest turn needs about \d+ tokens.*'small'.*contextWindow 1024 less 200/),
    });
    const events = await t.call('GET', '/api/events?type=reply.failed');
    expect(events.body.events.map((event: any) => event.data.inReplyTo)).toEqual([question]);
    expect(fake.requests).toHaveLength(0);
  });
});
