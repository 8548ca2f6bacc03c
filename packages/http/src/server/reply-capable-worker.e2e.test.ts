/**
 * @module Reply requests go to workers that have their agent's model (docs/replies-and-streams.md):
 * `parley serve` with `MODELS` and `DELIVERY_WORKER=false`, and `parley worker` processes sharing
 * Redis or PostgreSQL. A worker without the model never takes the request (and says once which
 * model it left to others); a worker with it makes the reply within one poll, whenever it starts.
 * With no such worker the request fails visibly with `reply.failed` after `REPLY_GIVE_UP_SECONDS`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEventStream, type EventStreamReader } from '../test-support/event-stream.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { sharedBackends } from '../test-support/shared-backends.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const KEY = 'capable-worker-key-0001';
/** The reply worker's default poll: a capable worker's first lease finds the request within it. */
const POLL_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of await sharedBackends()) {
  backend.describe(`reply requests and workers without the agent's model, on ${backend.name}`, () => {
    let fake: FakeOpenAi;
    let models: Record<string, string>;
    const started: ServerProcess[] = [];
    const readers: EventStreamReader[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAi();
      models = {
        MODELS: JSON.stringify({
          'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1' },
        }),
      };
    });
    afterAll(async () => {
      readers.forEach((reader) => reader.close());
      await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
      await fake.close();
      await backend.cleanup();
    });

    const start = async (store: Record<string, string>, env: Record<string, string>, command: 'serve' | 'worker') => {
      const instance = await startServerProcess(
        { ...store, API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]), ...env },
        command,
      );
      started.push(instance);
      return instance;
    };
    const call = async (instance: ServerProcess, method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
      const response = await fetch(`${instance.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    /** A conversation with an agent of model `local-llm`, its stream open. */
    const open = async (api: ServerProcess) => {
      const agent = await call(api, 'POST', '/api/agents', { name: 'Ada', description: '', model: 'local-llm' });
      expect(agent.status).toBe(201);
      const conversationId = (await call(api, 'POST', '/api/conversations', { agentId: agent.body.id })).body
        .id as string;
      const stream = await openEventStream(`${api.base}/api/conversations/${conversationId}/stream`, {
        authorization: `Bearer ${KEY}`,
      });
      readers.push(stream);
      return { conversationId, stream };
    };
    const send = async (api: ServerProcess, conversationId: string, content: string) => {
      const user = await call(api, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content });
      expect(user.status).toBe(201);
      return user.body.id as string;
    };
    const assistant = (event: { event: string; data: string }) =>
      event.event === 'message' && JSON.parse(event.data).role === 'assistant';

    it('a worker without the model names it once; one with it, started 4 s later, replies within a poll', async () => {
      const store = await backend.fresh('capable');
      const api = await start(store, { ...models, DELIVERY_WORKER: 'false' }, 'serve');
      expect(api.output()).toContain('reply through `parley worker` processes that have the same MODELS');
      const bare = await start(store, {}, 'worker');
      const { conversationId, stream } = await open(api);
      const first = await send(api, conversationId, 'hello');
      // The bare worker relays the message, queues the request for local-llm and says so, once.
      await expect
        .poll(() => bare.output(), { timeout: 10_000 })
        .toContain("reply requests for model 'local-llm' are left to workers that have it");
      await send(api, conversationId, 'still there?');
      await sleep(4_000);
      expect(bare.output().split("model 'local-llm'")).toHaveLength(2);
      expect(stream.received.filter(assistant)).toHaveLength(0);
      expect(fake.requests).toHaveLength(0);

      fake.script([{ deltas: ['made', ' at once'] }]);
      const capable = await start(store, models, 'worker');
      const ready = Date.now();
      const reply = await stream.until(assistant, 25_000).catch((error: Error) => {
        throw new Error(
          `${error.message}\n--- capable worker:\n${capable.output()}\n--- bare worker:\n${bare.output()}\n--- api:\n${api.output()}\n--- fake requests: ${fake.requests.length}`,
        );
      });
      // Before: the bare worker held the request under a 30 s lease, again and again. Within a poll
      // on a quiet machine; the bound leaves room for a loaded one, and stays far below the lease.
      expect(Date.now() - ready).toBeLessThan(POLL_MS + 9_000);
      expect(JSON.parse(reply.data)).toMatchObject({
        content: 'made at once',
        metadata: { reply: { inReplyTo: first, model: 'local-llm' } },
      });
      await expect.poll(() => stream.received.filter(assistant).length, { timeout: 10_000 }).toBe(2);
      await Promise.all([capable.stop('SIGTERM'), bare.stop('SIGTERM'), api.stop('SIGTERM')]);
    }, 90_000);

    it('with no worker that has the model, the request fails after REPLY_GIVE_UP_SECONDS, naming it', async () => {
      const store = await backend.fresh('giveup');
      const api = await start(store, { ...models, DELIVERY_WORKER: 'false' }, 'serve');
      const bare = await start(store, { REPLY_GIVE_UP_SECONDS: '1' }, 'worker');
      const { conversationId, stream } = await open(api);
      const userId = await send(api, conversationId, 'hello');
      const failed = await stream.until((event) => event.event === 'reply.failed', 45_000);
      expect(JSON.parse(failed.data)).toMatchObject({
        inReplyTo: userId,
        error: expect.stringMatching(/'local-llm'.*MODELS/),
      });
      expect(stream.received.filter((event) => event.event === 'message')).toHaveLength(1);
      await Promise.all([bare.stop('SIGTERM'), api.stop('SIGTERM')]);
    }, 90_000);
  });
}
