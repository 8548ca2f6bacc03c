/**
 * @module A paused reply is durable on Redis: `parley serve` processes sharing Redis (a fresh key
 * prefix), MODELS pointing at a fake Chat Completions server; every process is killed while a reply
 * waits for a client tool, two new ones start, and the answer resumes the reply once, on one of them.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi } from '../test-support/fake-openai.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import {
  repliesCounted,
  startServerProcess,
  startServerProcesses,
  type ServerProcess,
} from '../test-support/server-process.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

const KEY = 'tools-redis-key-000000001';

describeRedis('tools on Redis: a paused reply survives a restart of every process', () => {
  let fake: FakeOpenAi;
  let client: Redis;
  const prefix = uniquePrefix('tools');
  let env: Record<string, string>;
  const started: ServerProcess[] = [];

  beforeAll(async () => {
    client = new Redis(REDIS_URL);
    fake = await startFakeOpenAi();
    env = {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      METRICS_PORT: '0',
      API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]),
      MODELS: JSON.stringify({
        'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' },
      }),
    };
  });
  afterAll(async () => {
    await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
    await fake.close();
    await deletePrefix(client, prefix);
    await client.quit();
  });

  const call = async (instance: ServerProcess, method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${KEY}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${instance.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`Timed out; last value: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('a client tool answered after a restart of every process resumes the reply once; a message sent meanwhile is answered after it', async () => {
    // The model asks for the tool, answers from its result, and answers the later message on its own.
    const last = (request: ChatRequest) => request.body.messages.at(-1) as { role: string; content: unknown };
    fake.script((request) => {
      const message = last(request);
      if (message.role === 'tool') return { deltas: ['Booked for ', 'Friday.'] };
      if (message.content === 'Also, hi') return { deltas: ['Hi again.'] };
      return { toolCalls: [{ id: 'call_date_1', name: 'pick_date', arguments: { earliest: '2026-11-27' } }] };
    });
    const first = await startServerProcess(env);
    started.push(first);
    const agent = await call(first, 'POST', '/api/agents', {
      name: 'Ada',
      description: '',
      model: 'local-llm',
      tools: [
        {
          name: 'pick_date',
          description: 'Ask the user for a date',
          parameters: { type: 'object', properties: { earliest: { type: 'string' } } },
          kind: 'client',
        },
      ],
    });
    expect(agent.status).toBe(201);
    const conversationId = (await call(first, 'POST', '/api/conversations', { agentId: agent.body.id })).body
      .id as string;
    await call(first, 'POST', `/api/conversations/${conversationId}/messages`, {
      role: 'user',
      content: 'Book a table',
    });
    const paused = await until(
      () => call(first, 'GET', `/api/conversations/${conversationId}`),
      (response) => response.body.pendingToolCalls.length === 1,
    );
    // Parley's own id of the call, not the provider's `call_date_1`.
    const id = paused.body.pendingToolCalls[0].id as string;
    expect(id).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(paused.body.pendingToolCalls).toEqual([
      { id, name: 'pick_date', arguments: { earliest: '2026-11-27' }, kind: 'client', requiresApproval: false },
    ]);

    // Every process dies, once the paused request is acknowledged (repliesCounted); two new ones
    // (two reply workers) start on the same Redis.
    await until(
      () => repliesCounted(first, 'paused'),
      (paused) => paused === 1,
    );
    await first.stop('SIGKILL');
    started.length = 0;
    started.push(...(await startServerProcesses([env, env])));
    const [a, b] = started as [ServerProcess, ServerProcess];
    expect((await call(b, 'GET', `/api/conversations/${conversationId}`)).body.pendingToolCalls).toHaveLength(1);
    // A message while the reply waits is stored, and not answered yet.
    expect(
      (await call(b, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Also, hi' }))
        .status,
    ).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(fake.requests).toHaveLength(1);

    const answered = await call(a, 'POST', `/api/conversations/${conversationId}/tool-results`, {
      results: [{ toolCallId: id, output: { date: '2026-11-28' } }],
    });
    expect(answered).toEqual({ status: 202, body: { conversationId, pendingToolCalls: [] } });
    expect(
      (
        await call(b, 'POST', `/api/conversations/${conversationId}/tool-results`, {
          results: [{ toolCallId: id, output: {} }],
        })
      ).status,
    ).toBe(409);

    const history = await until(
      async () =>
        (await call(b, 'GET', `/api/conversations/${conversationId}/messages?limit=100`)).body.messages as Array<{
          role: string;
          content: string;
          toolCallId: string | null;
        }>,
      (messages) => messages.at(-1)?.content === 'Hi again.',
    );
    expect(history.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Book a table'],
      ['assistant', ''],
      ['user', 'Also, hi'],
      ['tool', JSON.stringify({ date: '2026-11-28' })],
      ['assistant', 'Booked for Friday.'],
      ['assistant', 'Hi again.'],
    ]);
    // Resumed once: one model call per step, on whichever worker took it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(fake.requests).toHaveLength(3);
    // The resumed step saw the call and its result, not the message that came while it waited.
    expect(fake.requests[1]!.body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(fake.requests[2]!.body.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    const events = (await call(a, 'GET', '/api/events?type=reply.requires_action')).body.events as Array<{
      data: { toolCalls: Array<{ id: string }> };
    }>;
    expect(events.map((event) => event.data.toolCalls[0]!.id)).toEqual([id]);
    // Three server starts (each up to 15 s on a loaded machine) and two waits for replies.
  }, 60_000);
});
