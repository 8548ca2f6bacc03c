/**
 * @module Stopping replies end to end (docs/replies-and-streams.md#stopping-a-reply): the built
 * `parley` processes and a fake Chat Completions server on loopback that streams slowly and records
 * whether its request was aborted. On memory one `parley serve` makes the replies; on Redis and
 * PostgreSQL `parley serve` (without a worker) takes the requests and a separate `parley worker`
 * process makes the replies, so the cancel crosses processes through the shared backend.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream, type EventStreamReader, type ReceivedEvent } from '../test-support/event-stream.js';
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi } from '../test-support/fake-openai.js';
import { sharedBackends, type SharedBackend } from '../test-support/shared-backends.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const KEY = 'reply-cancel-key-00000001';
/** The bound the tests check "within a second" against: generous, for a loaded machine. */
const STOP_BOUND_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Memory: one process; no store to make or remove. */
const memory: SharedBackend = {
  name: 'memory',
  describe,
  fresh: async () => ({}),
  cleanup: async () => {},
};

/** A story the fake provider tells one word every 100 ms: 20 s, far longer than any test waits. */
const STORY = Array.from({ length: 200 }, (_, index) => (index === 0 ? 'Once' : ` word${index}`));

for (const backend of [memory, ...(await sharedBackends())]) {
  backend.describe(`stopping replies on ${backend.name}`, () => {
    let fake: FakeOpenAi;
    let tools: Server;
    let toolCalls = 0;
    let models: Record<string, string>;
    const started: ServerProcess[] = [];
    const readers: EventStreamReader[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAi();
      tools = createServer((request, response) => {
        toolCalls += 1;
        request.resume();
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"booked":true}');
      });
      await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
      models = {
        MODELS: JSON.stringify({
          'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' },
        }),
      };
    });
    afterAll(async () => {
      readers.forEach((reader) => reader.close());
      await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
      await fake.close();
      await new Promise((resolve) => tools.close(resolve));
      await backend.cleanup();
    });

    /** The API process (and, on a shared backend, a separate worker process) on a fresh store. */
    const startProcesses = async (label: string): Promise<ServerProcess> => {
      const store = await backend.fresh(label);
      const env = {
        ...store,
        ...models,
        API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      };
      const shared = backend !== memory;
      const api = await startServerProcess(shared ? { ...env, DELIVERY_WORKER: 'false' } : env, 'serve', [], {
        startTimeoutMs: 30_000,
      });
      started.push(api);
      if (shared) started.push(await startServerProcess(env, 'worker', [], { startTimeoutMs: 30_000 }));
      return api;
    };
    const call = async (api: ServerProcess, method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${KEY}` };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const response = await fetch(`${api.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const open = async (api: ServerProcess, agent: Record<string, unknown> = {}) => {
      const created = await call(api, 'POST', '/api/agents', {
        name: 'Ada',
        description: '',
        model: 'local-llm',
        ...agent,
      });
      expect(created.status).toBe(201);
      const conversationId = (await call(api, 'POST', '/api/conversations', { agentId: created.body.id })).body
        .id as string;
      const stream = await openEventStream(`${api.base}/api/conversations/${conversationId}/stream`, {
        authorization: `Bearer ${KEY}`,
      });
      readers.push(stream);
      const send = async (content: string) => {
        const user = await call(api, 'POST', `/api/conversations/${conversationId}/messages`, {
          role: 'user',
          content,
        });
        expect(user.status).toBe(201);
        // With autoReply off the request is queued before this answers (no relay to wait for).
        if (agent.autoReply === false)
          expect((await call(api, 'POST', `/api/conversations/${conversationId}/reply`)).status).toBe(202);
        return user.body.id as string;
      };
      return { conversationId, stream, send };
    };
    const until = async (check: () => boolean, what: string, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
        await sleep(20);
      }
    };
    const of = (stream: EventStreamReader, type: string) => stream.received.filter((event) => event.event === type);
    const data = (event: ReceivedEvent) => JSON.parse(event.data) as Record<string, any>;

    it('a reply being made stops within the bound: the provider request is aborted, the text so far is stored as cancelled, a queued reply is never made', async () => {
      fake.script((_request: ChatRequest, index) =>
        index === 0 ? { deltas: STORY, delayMs: 100 } : { deltas: ['Fresh', ' start.'] },
      );
      const api = await startProcesses('running');
      const { conversationId, stream, send } = await open(api, { autoReply: false });
      const first = await send('Tell me a long story');
      // Within a second when all is well; on a loaded machine a storage fault while relaying the
      // request leaves it to be taken again when its 30 s lease ends.
      await until(() => of(stream, 'message.delta').length >= 3, 'the reply to be under way', 45_000);
      const second = await send('And then?');

      const cancelled = await call(api, 'POST', `/api/conversations/${conversationId}/reply/cancel`);
      const answeredAt = Date.now();
      expect(cancelled).toEqual({ status: 200, body: { cancelled: [first, second] } });
      const stored = () =>
        of(stream, 'message').filter((event) => data(event).metadata.reply?.finishReason === 'cancelled');
      await until(() => stored().length === 1, 'the cancelled reply to be stored', STOP_BOUND_MS);
      expect(Date.now() - answeredAt).toBeLessThan(STOP_BOUND_MS);
      await until(() => fake.requests[0]?.aborted === true, 'the provider request to be aborted', STOP_BOUND_MS);

      const reply = data(stored()[0]!);
      expect(reply).toMatchObject({ role: 'assistant', metadata: { reply: { inReplyTo: first, model: 'local-llm' } } });
      // The text written before the cancel: a start of the story, the deltas the stream saw.
      expect(reply.content.startsWith('Once word1 word2')).toBe(true);
      expect(STORY.join('').startsWith(reply.content)).toBe(true);
      expect(reply.content.length).toBeLessThan(STORY.join('').length);
      // Signals of two processes (the API's events, the worker's message) come in either order.
      await until(() => of(stream, 'reply.cancelled').length === 2, 'reply.cancelled on the stream');
      expect(of(stream, 'reply.cancelled').map(data)).toEqual([
        { conversationId, inReplyTo: first },
        { conversationId, inReplyTo: second },
      ]);
      // The queued reply never reached the provider; the conversation takes new replies.
      await sleep(1_500);
      expect(fake.requests).toHaveLength(1);
      const third = await send('Start over');
      await until(
        () => of(stream, 'message').some((event) => data(event).metadata.reply?.inReplyTo === third),
        'the next reply',
      );
      expect(fake.requests).toHaveLength(2);
      const history = await call(api, 'GET', `/api/conversations/${conversationId}/messages`);
      expect(history.body.messages.map((message: any) => [message.role, message.metadata.reply?.finishReason])).toEqual(
        [
          ['user', undefined],
          ['user', undefined],
          ['assistant', 'cancelled'],
          ['user', undefined],
          ['assistant', 'stop'],
        ],
      );
      const events = await call(api, 'GET', '/api/events?type=reply.cancelled');
      expect(events.body.events.map((event: any) => event.data.inReplyTo)).toEqual([first, second]);
      // Nothing left to stop.
      expect((await call(api, 'POST', `/api/conversations/${conversationId}/reply/cancel`)).body).toEqual({
        cancelled: [],
      });
    }, 120_000);

    it('a reply waiting for approval is closed: its call gets a cancelled result and is never made', async () => {
      const before = toolCalls;
      fake.script([{ toolCalls: [{ id: 'call_0', name: 'book_table', arguments: { time: '19:00' } }] }]);
      const api = await startProcesses('approval');
      const { conversationId, stream, send } = await open(api, {
        tools: [
          {
            name: 'book_table',
            description: 'Book a table',
            parameters: { type: 'object', properties: { time: { type: 'string' } } },
            kind: 'webhook',
            url: `http://127.0.0.1:${(tools.address() as AddressInfo).port}/book`,
            requiresApproval: true,
          },
        ],
      });
      const user = await send('Book a table at seven');
      await until(() => of(stream, 'reply.requires_action').length === 1, 'the reply to wait for approval', 45_000);
      const waiting = data(of(stream, 'reply.requires_action')[0]!).toolCalls[0].id as string;

      const cancelled = await call(api, 'POST', `/api/conversations/${conversationId}/reply/cancel`);
      expect(cancelled).toEqual({ status: 200, body: { cancelled: [user] } });
      expect((await call(api, 'GET', `/api/conversations/${conversationId}`)).body.pendingToolCalls).toEqual([]);
      await until(() => of(stream, 'reply.cancelled').length === 1, 'reply.cancelled on the stream');
      expect(data(of(stream, 'reply.cancelled')[0]!)).toEqual({ conversationId, inReplyTo: user });

      const history = await call(api, 'GET', `/api/conversations/${conversationId}/messages`);
      expect(
        history.body.messages.map((message: any) => [message.role, message.content, message.toolCallId ?? null]),
      ).toEqual([
        ['user', 'Book a table at seven', null],
        ['assistant', '', null],
        ['tool', '{"error":"cancelled"}', waiting],
        ['assistant', '', null],
      ]);
      expect(history.body.messages[3].metadata.reply).toMatchObject({ inReplyTo: user, finishReason: 'cancelled' });
      // An approval after the cancel is refused; the tool is never called.
      const late = await call(api, 'POST', `/api/conversations/${conversationId}/tool-results`, {
        results: [{ toolCallId: waiting, approved: true }],
      });
      expect(late.status).toBe(409);
      await sleep(1_000);
      expect(toolCalls).toBe(before);
      expect(fake.requests).toHaveLength(1);
    }, 120_000);
  });
}
