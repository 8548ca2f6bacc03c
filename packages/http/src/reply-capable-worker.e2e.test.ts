/**
 * @module A worker without `MODELS` never drops a reply (docs/replies-and-streams.md): `parley
 * serve` with `MODELS` and `DELIVERY_WORKER=false`, and `parley worker` processes sharing Redis. The
 * request waits (and the worker says so) until a worker with the model makes it, or fails visibly
 * with `reply.failed` after `REPLY_GIVE_UP_SECONDS`.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEventStream, type EventStreamReader } from './test-support/event-stream.js';
import { startFakeOpenAi, type FakeOpenAi } from './test-support/fake-openai.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from './test-support/redis.js';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

const KEY = 'capable-worker-key-0001';

describeRedis('reply requests and workers without MODELS, on Redis', () => {
  let fake: FakeOpenAi;
  let client: Redis;
  const prefix = uniquePrefix('capable');
  let common: Record<string, string>;
  let models: Record<string, string>;
  const started: ServerProcess[] = [];
  const readers: EventStreamReader[] = [];

  beforeAll(async () => {
    client = new Redis(REDIS_URL);
    fake = await startFakeOpenAi();
    common = { REDIS_URL, REDIS_PREFIX: prefix, API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]) };
    models = { MODELS: JSON.stringify({ 'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1' } }) };
  });
  afterAll(async () => {
    readers.forEach((reader) => reader.close());
    await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
    await fake.close();
    await deletePrefix(client, prefix);
    await client.quit();
  });

  const start = async (env: Record<string, string>, command: 'serve' | 'worker') => {
    const instance = await startServerProcess({ ...common, ...env }, command);
    started.push(instance);
    return instance;
  };
  const call = async (instance: ServerProcess, method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
    const response = await fetch(`${instance.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** A conversation with an agent of model `local-llm`, its stream open, and one user message sent. */
  const ask = async (api: ServerProcess) => {
    const agent = await call(api, 'POST', '/api/agents', { name: 'Ada', description: '', model: 'local-llm' });
    expect(agent.status).toBe(201);
    const conversationId = (await call(api, 'POST', '/api/conversations', { agentId: agent.body.id })).body.id as string;
    const stream = await openEventStream(`${api.base}/api/conversations/${conversationId}/stream`, { authorization: `Bearer ${KEY}` });
    readers.push(stream);
    const user = await call(api, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'hello' });
    expect(user.status).toBe(201);
    return { conversationId, stream, userId: user.body.id as string };
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('the server banner says who replies; a worker without MODELS leaves the request, and a worker with MODELS started later makes it', async () => {
    const api = await start({ ...models, DELIVERY_WORKER: 'false' }, 'serve');
    expect(api.output()).toContain('reply through `parley worker` processes that have the same MODELS');
    const bare = await start({ LOG_LEVEL: 'info' }, 'worker');
    // A log line, written asynchronously: it may reach stdout after the banner.
    await expect.poll(() => bare.output(), { timeout: 5_000 }).toContain('no MODELS in this process');

    const { stream, userId } = await ask(api);
    // The bare worker relays the message and leases the request, but cannot make it.
    await expect.poll(() => bare.output(), { timeout: 10_000 }).toContain('reply request left for a worker');
    await sleep(500);
    expect(stream.received.filter((event) => event.event === 'message')).toHaveLength(1);
    expect(fake.requests).toHaveLength(0);

    fake.script([{ deltas: ['made', ' later'] }]);
    await bare.stop('SIGTERM');
    const capable = await start(models, 'worker');
    // The request's lease (30 s) may still be held by the stopped worker: the capable one takes it over.
    const reply = await stream.until((event) => event.event === 'message' && JSON.parse(event.data).role === 'assistant', 45_000);
    expect(JSON.parse(reply.data)).toMatchObject({ content: 'made later', metadata: { reply: { inReplyTo: userId, model: 'local-llm' } } });
    await capable.stop('SIGTERM');
  }, 90_000);

  it('with no worker that has the model, the request fails visibly after REPLY_GIVE_UP_SECONDS', async () => {
    const api = await start({ ...models, DELIVERY_WORKER: 'false' }, 'serve');
    const bare = await start({ REPLY_GIVE_UP_SECONDS: '1' }, 'worker');
    const { stream, userId } = await ask(api);
    const failed = await stream.until((event) => event.event === 'reply.failed', 45_000);
    expect(JSON.parse(failed.data)).toMatchObject({ inReplyTo: userId, error: expect.stringContaining('MODELS') });
    expect(stream.received.filter((event) => event.event === 'message')).toHaveLength(1);
    await bare.stop('SIGTERM');
  }, 90_000);
});
