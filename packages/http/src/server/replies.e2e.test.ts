/**
 * @module Agent replies and live streams end to end on memory: MODELS → the real openai-compatible
 * provider → a fake Chat Completions server; the delivery worker's relay and a reply worker; SSE
 * over a real listening server.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import type { InProcessConversationFeed } from '@parley/core/adapter';
import { StaticHostResolver } from '@parley/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { languageModels } from './language-models.js';
import { readModelsConfig } from '../cli/models-config.js';
import { serve, type ServerHandle } from './serve.js';
import { openEventStream, type EventStreamReader } from '../test-support/event-stream.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';

let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(() => fake.close());

interface Running {
  core: Core;
  base: string;
  key: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  stream(conversationId: string, headers?: Record<string, string>, query?: string): Promise<EventStreamReader>;
  stop(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(keepAliveMs?: number, shutdown?: AbortSignal): Promise<Running> {
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
  const core = createCore(memoryAdapters(), {
    hostResolver: new StaticHostResolver(),
    models: languageModels(models),
    replyRetryDelaysMs: [10, 10],
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 }, replies: { pollMs: 50 } },
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, 'test-key-replies');
  const app = createApp(core, {
    logLevel: 'silent',
    replies: { ...(keepAliveMs !== undefined && { keepAliveMs }), ...(shutdown && { shutdown }) },
  });
  // Streams a test left open are cut at close rather than drained for 10 s.
  const handle: ServerHandle = await serve(app, { port: 0, drainTimeoutMs: 300 });
  core.workers.start();
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${handle.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const readers: EventStreamReader[] = [];
  const running: Running = {
    core,
    base: handle.url,
    key,
    call,
    async stream(conversationId, headers = {}, query = '') {
      const reader = await openEventStream(`${handle.url}/api/conversations/${conversationId}/stream${query}`, {
        authorization: `Bearer ${key}`,
        ...headers,
      });
      readers.push(reader);
      return reader;
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

async function conversationWith(running: Running, agent: Record<string, unknown> = {}) {
  const created = await running.call('POST', '/api/agents', {
    name: 'Ada',
    description: 'helper',
    model: 'local-llm',
    systemPrompt: 'You are terse.',
    temperature: 0.7,
    maxTokens: 120,
    ...agent,
  });
  expect(created.status).toBe(201);
  const agentId = ((await created.json()) as { id: string }).id;
  const conversation = (await (await running.call('POST', '/api/conversations', { agentId })).json()) as { id: string };
  return { agentId, conversationId: conversation.id };
}

const parse = (data: string) => JSON.parse(data) as Record<string, any>;

describe('agents that reply', () => {
  it('a user message gets a streamed, stored reply made from the system prompt, history, temperature and max_tokens', async () => {
    fake.script([{ deltas: ['Hel', 'lo', '!'], usage: { prompt_tokens: 30, completion_tokens: 3 }, delayMs: 20 }]);
    const t = await start();
    const { conversationId } = await conversationWith(t);
    const stream = await t.stream(conversationId);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    await t.call('POST', `/api/conversations/${conversationId}/messages`, {
      role: 'assistant',
      content: 'How can I help?',
    });
    const posted = await t.call('POST', `/api/conversations/${conversationId}/messages`, {
      role: 'user',
      content: 'Say hello',
    });
    expect(posted.status).toBe(201);
    const user = (await posted.json()) as { id: string };
    const reply = await stream.until(
      (event) => event.event === 'message' && parse(event.data).metadata.reply !== undefined,
    );
    const events = stream.received.map((event) => event.event);
    const deltas = stream.received.filter((event) => event.event === 'message.delta').map((event) => parse(event.data));
    expect(deltas).toEqual([
      { inReplyTo: user.id, delta: 'Hel', attempt: 1 },
      { inReplyTo: user.id, delta: 'lo', attempt: 1 },
      { inReplyTo: user.id, delta: '!', attempt: 1 },
    ]);
    expect(events.indexOf('message.delta')).toBeLessThan(events.lastIndexOf('message'));
    expect(parse(reply.data)).toMatchObject({
      role: 'assistant',
      content: 'Hello!',
      metadata: {
        reply: {
          inReplyTo: user.id,
          model: 'local-llm',
          finishReason: 'stop',
          usage: { inputTokens: 30, outputTokens: 3 },
        },
      },
    });
    const request = fake.requests.at(-1)!;
    expect(request.body).toMatchObject({ model: 'tiny-1', temperature: 0.7, max_tokens: 120, stream: true });
    expect(request.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'assistant', content: 'How can I help?' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(request.authorization).toBe('Bearer sk-fake');
    const history = (await (await t.call('GET', `/api/conversations/${conversationId}/messages`)).json()) as {
      messages: Array<{ role: string }>;
    };
    expect(history.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
  });

  it('a provider failing twice then answering gives one reply; failing always gives reply.failed and no message', async () => {
    const t = await start();
    fake.script([{ status: 500 }, { status: 503 }, { deltas: ['fine'] }]);
    const { conversationId } = await conversationWith(t);
    const stream = await t.stream(conversationId);
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'one' });
    await stream.until((event) => event.event === 'message' && parse(event.data).role === 'assistant');
    expect(fake.requests).toHaveLength(3);
    fake.script([{ status: 500 }]);
    const second = await t.call('POST', `/api/conversations/${conversationId}/messages`, {
      role: 'user',
      content: 'two',
    });
    const secondId = ((await second.json()) as { id: string }).id;
    const failed = await stream.until((event) => event.event === 'reply.failed');
    expect(parse(failed.data)).toEqual({ inReplyTo: secondId, error: expect.stringContaining('failed 3 times') });
    expect(fake.requests).toHaveLength(3);
    const history = (await (await t.call('GET', `/api/conversations/${conversationId}/messages`)).json()) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(history.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'fine'],
      ['user', 'two'],
    ]);
  });

  it('POST /reply answers 202 for an agent with autoReply off, and 409 for one without a configured model', async () => {
    fake.script([{ deltas: ['asked'] }]);
    const t = await start();
    const { conversationId } = await conversationWith(t, { autoReply: false });
    const stream = await t.stream(conversationId);
    const user = (await (
      await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'hi' })
    ).json()) as { id: string };
    await stream.until((event) => event.event === 'message');
    const asked = await t.call('POST', `/api/conversations/${conversationId}/reply`);
    expect(asked.status).toBe(202);
    expect(await asked.json()).toEqual({ conversationId, inReplyTo: user.id });
    const reply = await stream.until((event) => event.event === 'message' && parse(event.data).role === 'assistant');
    expect(parse(reply.data).content).toBe('asked');
    const plain = await conversationWith(t, { model: 'modelA-4' });
    const refused = await t.call('POST', `/api/conversations/${plain.conversationId}/reply`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('conflict');
  });

  it("validates agent models against the spec's three plus MODELS, in the API and in /openapi.json", async () => {
    const t = await start();
    expect((await t.call('POST', '/api/agents', { name: 'A', description: '', model: 'gpt-unknown' })).status).toBe(
      400,
    );
    const document = (await (await fetch(`${t.base}/openapi.json`)).json()) as any;
    expect(document.components.schemas.AgentCreate.properties.model.enum).toEqual([
      'modelA-4',
      'modelA-3.5-turbo',
      'modelB-3',
      'local-llm',
    ]);
    expect(document.components.schemas.AgentUpdate.properties.model.enum).toContain('local-llm');
    expect(
      document.paths['/api/conversations/{id}/stream'].get.responses['200'].content['text/event-stream'],
    ).toBeDefined();
  });
});

describe('live streams', () => {
  it('resumes after Last-Event-ID or ?after= with every later message once, then ends on completion', async () => {
    fake.script([{ deltas: ['r'] }]);
    const t = await start();
    const { conversationId } = await conversationWith(t, { autoReply: false });
    const ids: string[] = [];
    for (const content of ['a', 'b', 'c']) {
      ids.push(
        (
          (await (
            await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content })
          ).json()) as { id: string }
        ).id,
      );
    }
    const first = await t.stream(conversationId);
    const firstThree = [await first.next(), await first.next(), await first.next()];
    expect(firstThree.map((event) => parse(event.data).id)).toEqual(ids);
    first.close();
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'd' });
    const resumed = await t.stream(conversationId, { 'last-event-id': firstThree[0]!.id! });
    const byQuery = await t.stream(conversationId, {}, `?after=${encodeURIComponent(firstThree[1]!.id!)}`);
    const contents = async (reader: EventStreamReader, n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i += 1) out.push(parse((await reader.next()).data).content as string);
      return out;
    };
    expect(await contents(resumed, 3)).toEqual(['b', 'c', 'd']);
    expect(await contents(byQuery, 2)).toEqual(['c', 'd']);
    await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'e' });
    expect(await contents(resumed, 1)).toEqual(['e']);
    await t.call('PATCH', `/api/conversations/${conversationId}`, { status: 'completed' });
    const done = await resumed.until((event) => event.event === 'conversation.completed');
    expect(parse(done.data)).toMatchObject({ id: conversationId, status: 'completed' });
    await resumed.ended;
    expect(
      resumed.received.filter((event) => event.event === 'message').map((event) => parse(event.data).content),
    ).toEqual(['b', 'c', 'd', 'e']);
    // A completed conversation's stream sends what is after the cursor, then the end.
    const late = await t.stream(conversationId, { 'last-event-id': firstThree[2]!.id! });
    await late.ended;
    expect(late.received.map((event) => event.event)).toEqual(['message', 'message', 'conversation.completed']);
  });

  it('refuses a foreign or forged cursor (400), an unknown conversation (404) and a key without conversations:read (403)', async () => {
    const t = await start();
    const a = await conversationWith(t);
    const b = await conversationWith(t);
    const message = (await (
      await t.call('POST', `/api/conversations/${a.conversationId}/messages`, { role: 'system', content: 'x' })
    ).json()) as { id: string };
    const history = await t.stream(a.conversationId);
    const cursor = (await history.next()).id!;
    history.close();
    expect(message.id).toBeTruthy();
    expect(
      (await t.call('GET', `/api/conversations/${b.conversationId}/stream`, undefined, { 'last-event-id': cursor }))
        .status,
    ).toBe(400);
    expect((await t.call('GET', `/api/conversations/${a.conversationId}/stream?after=forged`)).status).toBe(400);
    expect((await t.call('GET', `/api/conversations/${a.conversationId}/stream?since=1`)).status).toBe(400);
    expect((await t.call('GET', '/api/conversations/conv_unknown/stream')).status).toBe(404);
    const { key } = await t.core.apiKeys.issue(
      { workspaceId: 'ws1', plan: 'pro', scopes: ['agents:read'] },
      'test-key-no-conv-read',
    );
    expect(
      (
        await fetch(`${t.base}/api/conversations/${a.conversationId}/stream`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).status,
    ).toBe(403);
  });

  it('sends keep-alive comments, and a client that disconnects leaves no subscription or timer behind', async () => {
    const t = await start(100);
    const { conversationId } = await conversationWith(t);
    const feed = t.core.feed as InProcessConversationFeed;
    const timersBefore = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const streams = await Promise.all([t.stream(conversationId), t.stream(conversationId), t.stream(conversationId)]);
    await streams[0]!.until((event) => event.event === 'comment');
    expect(feed.subscriptionCount).toBe(3);
    streams.forEach((stream) => stream.close());
    for (let i = 0; i < 100 && feed.subscriptionCount > 0; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(feed.subscriptionCount).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const timersAfter = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    expect(timersAfter).toBeLessThanOrEqual(timersBefore);
  });
});

describe('shutdown', () => {
  it('ends every open stream when the shutdown signal is aborted', async () => {
    const shutdown = new AbortController();
    const t = await start(undefined, shutdown.signal);
    const { conversationId } = await conversationWith(t);
    const streams = await Promise.all([t.stream(conversationId), t.stream(conversationId)]);
    const feed = t.core.feed as InProcessConversationFeed;
    expect(feed.subscriptionCount).toBe(2);
    shutdown.abort();
    await Promise.all(streams.map((stream) => stream.ended));
    expect(feed.subscriptionCount).toBe(0);
  });
});

describe('history after cursor', () => {
  it('pages forward, oldest first, and refuses before with after', async () => {
    const t = await start();
    const { conversationId } = await conversationWith(t, { autoReply: false });
    for (const content of ['1', '2', '3', '4', '5'])
      await t.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content });
    const oldest = (await (
      await t.call(
        'GET',
        `/api/conversations/${conversationId}/messages?limit=1&before=${await cursorOf(t, conversationId, 1)}`,
      )
    ).json()) as any;
    expect(oldest.messages.map((m: any) => m.content)).toEqual(['1']);
    const after = await cursorOf(t, conversationId, 0);
    const page = (await (
      await t.call('GET', `/api/conversations/${conversationId}/messages?limit=2&after=${after}`)
    ).json()) as any;
    expect(page.messages.map((m: any) => m.content)).toEqual(['2', '3']);
    expect(page.hasMore).toBe(true);
    const next = (await (
      await t.call('GET', `/api/conversations/${conversationId}/messages?limit=2&after=${page.nextCursor}`)
    ).json()) as any;
    expect(next.messages.map((m: any) => m.content)).toEqual(['4', '5']);
    expect(next).toEqual({ messages: next.messages, hasMore: false });
    const both = await t.call('GET', `/api/conversations/${conversationId}/messages?after=${after}&before=${after}`);
    expect(both.status).toBe(400);
    expect(((await both.json()) as any).error.code).toBe('validation_failed');
  });
});

/** The stream cursor of the `index`-th message (0 = oldest), read from a stream. */
async function cursorOf(t: Running, conversationId: string, index: number): Promise<string> {
  const reader = await t.stream(conversationId);
  let event = await reader.next();
  for (let i = 0; i < index; i += 1) event = await reader.next();
  reader.close();
  return encodeURIComponent(event.id!);
}
