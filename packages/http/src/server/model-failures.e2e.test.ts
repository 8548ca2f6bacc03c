/**
 * @module Model failures can be diagnosed (docs/replies-and-streams.md): `parley serve` with a
 * provider answering 401 with an OpenAI-style error body that repeats the key, and a provider on a
 * closed port. The log lines and the `reply.failed` event say what happened — the HTTP status and
 * the provider's message, or connection refused, and the host — never the key or the conversation.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { openEventStream, type EventStreamReader } from '../test-support/event-stream.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const API_KEY = 'model-failures-key-0001';
const PROVIDER_KEY = 'sk-parley-provider-secret-0123456789abcdef';
const CONTENT = 'Top secret question about the merger';

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('model failures in the log and in reply.failed', () => {
  let fake: FakeOpenAi;
  let server: ServerProcess;
  let offline: number;
  const readers: EventStreamReader[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    fake.script([
      {
        status: 401,
        errorMessage: `Incorrect API key provided: ${PROVIDER_KEY}. Find your key at https://example.com/keys.`,
      },
    ]);
    offline = await closedPort();
    server = await startServerProcess({
      API_KEYS: JSON.stringify([{ key: API_KEY, workspace: 'acme', plan: 'pro' }]),
      MODELS: JSON.stringify({
        refusing: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKeyEnv: 'PROVIDER_KEY' },
        offline: { provider: 'openai-compatible', baseURL: `http://127.0.0.1:${offline}/v1`, model: 'tiny-1' },
      }),
      PROVIDER_KEY,
    });
  });
  afterAll(async () => {
    readers.forEach((reader) => reader.close());
    await server?.stop();
    await fake?.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const headers = { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' };
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as any;
  };
  /** Asks the agent of `model` and resolves with the `reply.failed` its stream gets. */
  const failure = async (model: string) => {
    const agent = await call('POST', '/api/agents', { name: model, description: '', model });
    const conversation = await call('POST', '/api/conversations', { agentId: agent.id });
    const stream = await openEventStream(`${server.base}/api/conversations/${conversation.id}/stream`, {
      authorization: `Bearer ${API_KEY}`,
    });
    readers.push(stream);
    await call('POST', `/api/conversations/${conversation.id}/messages`, { role: 'user', content: CONTENT });
    // 3 tries, 1 s and 4 s apart.
    const failed = await stream.until((event) => event.event === 'reply.failed', 30_000);
    return { conversationId: conversation.id as string, error: JSON.parse(failed.data).error as string };
  };
  const logLines = () =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("say the status, host and provider's message, or connection refused; never key or content", async () => {
    const [refused, unreachable] = await Promise.all([failure('refusing'), failure('offline')]);
    const host = new URL(fake.baseURL).host;
    const message = 'Incorrect API key provided: [redacted]. Find your key at https://example.com/keys.';
    const http401 = `HTTP 401 from ${host}: ${message}`;
    const connection = `connection refused (ECONNREFUSED) to 127.0.0.1:${offline}`;
    expect(refused.error).toBe(`The language model failed 3 times (${http401}); the reply was given up.`);
    expect(unreachable.error).toBe(`The language model failed 3 times (${connection}); the reply was given up.`);

    const events = (await call('GET', '/api/events?type=reply.failed')).events as Array<{
      data: { conversationId: string; error: string };
    }>;
    expect(events.find((event) => event.data.conversationId === refused.conversationId)?.data.error).toBe(
      refused.error,
    );
    expect(events.find((event) => event.data.conversationId === unreachable.conversationId)?.data.error).toBe(
      unreachable.error,
    );

    // The log reaches stdout on its own schedule: wait for both replies' last lines.
    const givenUp = () => logLines().filter((line) => line.msg === 'reply given up').length;
    await expect.poll(givenUp, { timeout: 5_000 }).toBe(2);
    const lines = logLines();
    const tries = lines.filter((line) => String(line.msg).startsWith('language model failed'));
    expect(tries.filter((line) => line.model === 'refusing')).toHaveLength(3);
    expect(tries.find((line) => line.model === 'refusing')).toMatchObject({
      msg: `language model failed: ${http401}`,
      error: http401,
      status: 401,
      host,
    });
    expect(tries.find((line) => line.model === 'offline')).toMatchObject({
      error: connection,
      code: 'ECONNREFUSED',
      host: `127.0.0.1:${offline}`,
    });
    expect(lines.filter((line) => line.msg === 'reply given up').map((line) => line.error)).toEqual(
      expect.arrayContaining([http401, connection]),
    );

    const everything = `${server.output()}${server.stderr()}${JSON.stringify(events)}`;
    expect(everything).not.toContain(PROVIDER_KEY);
    expect(everything).not.toContain(CONTENT);
    // The provider did get the key: it was removed from what it answered, not from the request.
    expect(fake.requests[0]?.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  }, 60_000);
});
