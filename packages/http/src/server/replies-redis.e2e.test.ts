/**
 * @module Replies and live streams across instances: two `parley serve` processes sharing Redis
 * (a fresh key prefix) or PostgreSQL (a fresh schema) with MODELS pointing at a fake Chat
 * Completions server on loopback.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEventStream, type EventStreamReader, type ReceivedEvent } from '../test-support/event-stream.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { startServerProcess, startServerProcesses, type ServerProcess } from '../test-support/server-process.js';
import { sharedBackends } from '../test-support/shared-backends.js';

const KEY = 'replies-instances-key-0001';

for (const backend of await sharedBackends())
  backend.describe(`replies and streams across two parley serve instances on ${backend.name}`, () => {
    let fake: FakeOpenAi;
    let env: Record<string, string>;
    const started: ServerProcess[] = [];
    const readers: EventStreamReader[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAi();
      env = {
        ...(await backend.fresh('replies')),
        API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]),
        MODELS: JSON.stringify({
          'local-llm': {
            provider: 'openai-compatible',
            baseURL: fake.baseURL,
            model: 'tiny-1',
            apiKeyEnv: 'FAKE_LLM_KEY',
          },
        }),
        FAKE_LLM_KEY: 'sk-not-logged-1234',
      };
      started.push(...(await startServerProcesses([env, env])));
    });
    afterAll(async () => {
      readers.forEach((reader) => reader.close());
      await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
      await fake.close();
      await backend.cleanup();
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
    const stream = async (instance: ServerProcess, conversationId: string, lastEventId?: string) => {
      const reader = await openEventStream(`${instance.base}/api/conversations/${conversationId}/stream`, {
        authorization: `Bearer ${KEY}`,
        ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
      });
      readers.push(reader);
      expect(reader.status).toBe(200);
      return reader;
    };
    const conversation = async (instance: ServerProcess, settings: Record<string, unknown> = {}) => {
      const agent = await call(instance, 'POST', '/api/agents', {
        name: 'Ada',
        description: '',
        model: 'local-llm',
        systemPrompt: 'Be kind.',
        ...settings,
      });
      expect(agent.status).toBe(201);
      return (await call(instance, 'POST', '/api/conversations', { agentId: agent.body.id })).body.id as string;
    };
    const messagesOf = (events: ReceivedEvent[]) =>
      events
        .filter((event) => event.event === 'message')
        .map((event) => JSON.parse(event.data) as { id: string; role: string; content: string });

    it('a message posted through one instance reaches a stream held on the other, and its reply streams there too', async () => {
      const [a, b] = started as [ServerProcess, ServerProcess];
      fake.script([{ deltas: ['Across', ' instances'], delayMs: 10 }]);
      const conversationId = await conversation(a);
      const held = await stream(b, conversationId);
      const posted = await call(a, 'POST', `/api/conversations/${conversationId}/messages`, {
        role: 'user',
        content: 'hello from A',
      });
      expect(posted.status).toBe(201);
      const reply = await held
        // Within a second when all is well; a storage fault while relaying the message (a loaded
        // machine) is tried again a second later, and after four failures its batch is taken again
        // when its 30 s lease ends.
        .until((event) => event.event === 'message' && JSON.parse(event.data).role === 'assistant', 45_000)
        .catch((error: Error) => {
          // What the servers warned of says why (a worker's storage faults, a failed model call).
          const warnings = started.flatMap((instance) =>
            (instance.output() + instance.stderr()).split('\n').filter((line) => /"level":(40|50|60)/.test(line)),
          );
          throw new Error(`${error.message}\n${warnings.join('\n')}`);
        });
      expect(JSON.parse(reply.data)).toMatchObject({
        content: 'Across instances',
        metadata: { reply: { inReplyTo: posted.body.id, model: 'local-llm' } },
      });
      const kinds = held.received.map((event) => event.event);
      expect(kinds.filter((kind) => kind === 'message.delta')).toHaveLength(2);
      expect(kinds.indexOf('message.delta')).toBeLessThan(kinds.lastIndexOf('message'));
      expect(messagesOf(held.received).map((m) => m.content)).toEqual(['hello from A', 'Across instances']);
      expect(fake.requests.at(-1)?.authorization).toBe('Bearer sk-not-logged-1234');
      for (const instance of started) expect(instance.output() + instance.stderr()).not.toContain('sk-not-logged-1234');
    }, 90_000);

    it('after the instance holding a stream is killed, the other resumes from Last-Event-ID: nothing missed, nothing twice', async () => {
      const [a, b] = started as [ServerProcess, ServerProcess];
      const conversationId = await conversation(a, { autoReply: false });
      const held = await stream(a, conversationId);
      for (const content of ['m1', 'm2'])
        await call(b, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content });
      await held.until(() => messagesOf(held.received).length === 2, 10_000);
      const lastSeen = held.received.filter((event) => event.event === 'message').at(-1)!.id!;
      await a.stop('SIGKILL');
      // Written while the client has no stream at all.
      for (const content of ['m3', 'm4'])
        await call(b, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content });
      const resumed = await stream(b, conversationId, lastSeen);
      await resumed.until(() => messagesOf(resumed.received).length === 2, 10_000);
      await call(b, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'm5' });
      await resumed.until(() => messagesOf(resumed.received).length === 3, 10_000);
      const seen = [...messagesOf(held.received), ...messagesOf(resumed.received)].map((m) => m.content);
      expect(seen).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
      // Replaced, so the afterAll's SIGKILL finds a live process either way.
      started[0] = await startServerProcess(env);
    });
  });
