/**
 * @module `conversations.stream` against a real listening server: typed events in order, a reply's
 * deltas, the end on `conversation.completed`, reconnection with `Last-Event-ID` after a dropped
 * connection (nothing missed, nothing twice), an abort, and an error answer.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import { scriptedModel } from '@parley/core/testing';
import { createApp } from '@parley/http';
import { serve, type ServerHandle } from '@parley/http/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParleyClient, ParleyApiError, type ConversationStreamEvent, type ParleyClient } from './index.js';

let server: ServerHandle;
let core: Core;
let key: string;
let parley: ParleyClient;
/** `Last-Event-ID` of every stream request, in order. */
const resumedAfter: Array<string | null> = [];

/** A client whose first stream response is cut after `cutAfterBytes` bytes, as a dropped connection would. */
function clientCutting(cutAfterBytes: number | undefined): ParleyClient {
  let cut = false;
  return createParleyClient({
    baseUrl: server.url,
    apiKey: key,
    fetch: async (request) => {
      const response = await fetch(request);
      if (!new URL(request.url).pathname.endsWith('/stream')) return response;
      resumedAfter.push(request.headers.get('Last-Event-ID'));
      if (cut || cutAfterBytes === undefined || !response.body) return response;
      cut = true;
      const reader = response.body.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done || sent >= cutAfterBytes) {
            await reader.cancel();
            controller.error(new TypeError('terminated')); // what undici reports for a dropped connection
            return;
          }
          const part = value.subarray(0, cutAfterBytes - sent);
          sent += part.length;
          controller.enqueue(part);
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    },
  });
}

beforeAll(async () => {
  const model = scriptedModel([{ deltas: ['Sky ', 'is ', 'blue.'] }]);
  core = createCore(memoryAdapters(), { models: { scripted: model } });
  core.workers.start();
  server = await serve(createApp(core, { logLevel: 'silent' }), { port: 0 });
  key = (await core.apiKeys.issue({ workspaceId: 'acme', plan: 'pro' })).key;
  parley = clientCutting(undefined);
});
afterAll(async () => {
  await server.close();
  await core.workers.stop();
});

async function conversationWith(model: string, contents: string[]) {
  const agent = await parley.agents.create({ name: 'Ada', description: 'Answers', model });
  const conversation = await parley.conversations.create({ agentId: agent.id });
  for (const content of contents) await parley.messages.send(conversation.id, { role: 'user', content });
  return conversation;
}

describe('conversations.stream', () => {
  it("yields typed events: the history, live messages, a reply's deltas and the stored reply, then conversation.completed, and ends", async () => {
    const conversation = await conversationWith('modelA-4', ['first', 'second']);
    // The scripted agent replies to messages sent from now on.
    await parley.agents.update(conversation.agentId, { model: 'scripted' });
    const seen: ConversationStreamEvent[] = [];
    for await (const event of parley.conversations.stream(conversation.id)) {
      seen.push(event);
      if (event.type === 'message' && event.data.content === 'second')
        await parley.messages.send(conversation.id, { role: 'user', content: 'Why is the sky blue?' });
      if (event.type === 'message' && event.data.role === 'assistant')
        await parley.conversations.update(conversation.id, { status: 'completed' });
    }
    const summary = seen.map((event) =>
      event.type === 'message'
        ? `message ${event.data.role}: ${event.data.content}`
        : event.type === 'message.delta'
          ? `delta ${event.data.delta}`
          : event.type,
    );
    expect(summary).toEqual([
      'message user: first',
      'message user: second',
      'message user: Why is the sky blue?',
      'delta Sky ',
      'delta is ',
      'delta blue.',
      'message assistant: Sky is blue.',
      'conversation.completed',
    ]);
    const last = seen.at(-1)!;
    expect(last.type === 'conversation.completed' && last.data.status).toBe('completed');
    const first = seen[0]!;
    expect(first.type === 'message' && first.id).toEqual(expect.any(String));
  });

  it('reconnects after a connection dropped before any event: it starts over from the same place', async () => {
    const conversation = await conversationWith('modelA-4', ['one', 'two', 'three', 'four']);
    await parley.conversations.update(conversation.id, { status: 'completed' });
    resumedAfter.length = 0;
    const events: ConversationStreamEvent[] = [];
    for await (const event of clientCutting(1).conversations.stream(conversation.id, { reconnectDelayMs: 10 }))
      events.push(event);
    expect(events.map((event) => (event.type === 'message' ? event.data.content : event.type))).toEqual([
      'one',
      'two',
      'three',
      'four',
      'conversation.completed',
    ]);
    expect(resumedAfter).toEqual([null, null]);
  });

  it('resumes after the last whole message when the cut falls mid-stream', async () => {
    const conversation = await conversationWith('modelA-4', ['alpha', 'beta', 'gamma']);
    await parley.conversations.update(conversation.id, { status: 'completed' });
    const whole = await new Response(await parley.replies.stream(conversation.id)).text();
    const secondEvent = whole.indexOf('event: message', whole.indexOf('event: message') + 1);
    resumedAfter.length = 0;
    const events: ConversationStreamEvent[] = [];
    for await (const event of clientCutting(secondEvent + 20).conversations.stream(conversation.id, {
      reconnectDelayMs: 10,
    }))
      events.push(event);
    const messages = events.filter((event) => event.type === 'message');
    expect(messages.map((event) => event.data.content)).toEqual(['alpha', 'beta', 'gamma']);
    // The second request resumed after the first message, the only one received whole.
    expect(resumedAfter).toEqual([null, (messages[0] as { id: string }).id]);
  });

  it('ends quietly on abort, and throws ParleyApiError for an unknown conversation', async () => {
    const conversation = await conversationWith('modelA-4', ['hello']);
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const event of parley.conversations.stream(conversation.id, { signal: controller.signal })) {
      seen.push(event.type);
      controller.abort();
    }
    expect(seen).toEqual(['message']);
    const failure = await (async () => {
      for await (const _ of parley.conversations.stream('conv_missing')) return 'no error';
      return 'ended';
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ParleyApiError);
    expect(failure).toMatchObject({ status: 404, code: 'not_found' });
  });
});
