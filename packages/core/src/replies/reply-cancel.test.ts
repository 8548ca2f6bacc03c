/**
 * @module Stopping replies (docs/replies-and-streams.md#stopping-a-reply) on the memory adapters: a
 * reply being made (its model call aborted, its text kept), queued ones, one paused for a client
 * tool, one calling a webhook tool, one whose worker died after the cancel.
 */
import { MemoryReplyQueue, memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, isParleyError, type AgentCreateInput, type ReplyOutcome } from '../index.js';
import type { LanguageModel, ModelRequest, ModelStreamPart } from '../ports/language-model.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';
import { recordedEvents } from '../test-support/events.js';
import { StaticHostResolver } from '../testing/host-resolver.js';
import { ReplyCancelledError } from './reply-cancel.js';
import { ReplyWorker } from './reply-worker.js';

const WS = { workspaceId: 'ws1' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How a call to the slow model went. */
interface Call {
  request: Omit<ModelRequest, 'signal'>;
  /** Set once the call's signal was aborted, with its reason. */
  abortedWith?: unknown;
}

/**
 * A model that writes `deltas` and then, unless `finish` is set, waits until its signal is aborted
 * (a provider still generating). Records each call and whether (and why) it was aborted.
 */
function slowModel(script: (index: number) => { deltas: string[]; finish?: boolean; toolCall?: boolean }) {
  const calls: Call[] = [];
  const model: LanguageModel = {
    async *stream({ signal, ...request }): AsyncIterable<ModelStreamPart> {
      const call: Call = { request: structuredClone(request) };
      const turn = script(calls.push(call) - 1);
      signal?.addEventListener('abort', () => (call.abortedWith = signal.reason), { once: true });
      for (const delta of turn.deltas) yield { type: 'text-delta', delta };
      if (turn.toolCall) {
        const toolCall = { id: 'p1', name: turn.finish ? 'ask_user' : 'lookup', arguments: {} };
        yield { type: 'tool-call', toolCall };
        yield { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 1 } };
        return;
      }
      if (!turn.finish) {
        await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      }
      yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: turn.deltas.length } };
    },
  };
  return { model, calls };
}

async function setup(
  model: LanguageModel,
  agent: Partial<AgentCreateInput> = {},
  options: { queue?: MemoryReplyQueue; transport?: WebhookTransport; start?: boolean } = {},
) {
  const adapters = memoryAdapters();
  const queue = options.queue ?? adapters.replyQueue;
  const core = createCore(
    { ...adapters, replyQueue: queue },
    {
      models: { tiny: model },
      replyRetryDelaysMs: [1, 1],
      hostResolver: new StaticHostResolver(),
      ...(options.transport && { webhookTransport: options.transport }),
    },
  );
  const created = await core.agents.create(WS, { name: 'Ada', description: '', model: 'tiny', ...agent });
  const conversation = await core.conversations.create(WS, { agentId: created.id, userId: 'u1' });
  const outcomes: ReplyOutcome[] = [];
  const worker = new ReplyWorker({
    replies: core.replies,
    queue,
    pollMs: 10,
    cancelCheckMs: 20,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  if (options.start !== false) worker.start();
  const ask = async (content: string) => {
    const message = await core.conversations.sendMessage(WS, conversation.id, { role: 'user', content });
    await core.replies.request(WS, conversation.id);
    return message;
  };
  const until = async (check: () => boolean | Promise<boolean>, what: string) => {
    // Generous: a loaded machine is slow; the mechanism itself takes one cancelCheckMs.
    for (let waited = 0; waited < 5_000; waited += 10) {
      if (await check()) return;
      await sleep(10);
    }
    throw new Error(`Timed out waiting for ${what}.`);
  };
  const history = async () => (await core.conversations.history(WS, conversation.id, { limit: 100 })).messages;
  const cancelledEvents = async () =>
    (await recordedEvents(adapters.storage)).filter((event) => event.type === 'reply.cancelled').map((e) => e.data);
  return { core, adapters, queue, conversation, worker, outcomes, ask, until, history, cancelledEvents };
}

describe('stopping replies', () => {
  it('a reply being made: its model call is aborted, the text written so far is stored as cancelled', async () => {
    const slow = slowModel(() => ({ deltas: ['Once upon', ' a time'] }));
    const t = await setup(slow.model);
    const user = await t.ask('Tell me a story');
    await t.until(() => slow.calls.length === 1, 'the model call');
    // The deltas were streamed (published before the model waits).
    await sleep(50);
    expect(await t.core.replies.cancel(WS, t.conversation.id)).toEqual({ cancelled: [user.id] });
    await t.until(() => t.outcomes.length === 1, 'the worker to stop');
    expect(t.outcomes).toEqual(['cancelled']);
    expect(slow.calls[0]!.abortedWith).toBeInstanceOf(ReplyCancelledError);
    const history = await t.history();
    expect(history.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Tell me a story'],
      ['assistant', 'Once upon a time'],
    ]);
    expect(history[1]!.metadata.reply).toMatchObject({
      inReplyTo: user.id,
      finishReason: 'cancelled',
      usage: { inputTokens: null, outputTokens: null },
    });
    expect(await t.cancelledEvents()).toEqual([{ conversationId: t.conversation.id, inReplyTo: user.id }]);
    expect(await t.queue.size()).toBe(0);
    // Nothing left to stop.
    expect(await t.core.replies.cancel(WS, t.conversation.id)).toEqual({ cancelled: [] });
    await t.worker.stop();
  });

  it('queued replies are removed and never made; a reply asked for afterwards is made', async () => {
    const slow = slowModel((index) => ({ deltas: index === 0 ? [] : ['Fine.'], finish: index > 0 }));
    const t = await setup(slow.model);
    const first = await t.ask('one');
    await t.until(() => slow.calls.length === 1, 'the first model call');
    const second = await t.ask('two');
    const third = await t.ask('three');
    expect(await t.core.replies.cancel(WS, t.conversation.id)).toEqual({
      cancelled: [first.id, second.id, third.id],
    });
    await t.until(() => t.outcomes.length === 1, 'the worker to stop');
    // Nothing was written: nothing is stored, and the queued requests never reach the model.
    expect((await t.history()).map((message) => message.role)).toEqual(['user', 'user', 'user']);
    expect(await t.cancelledEvents()).toHaveLength(3);
    const fourth = await t.ask('four');
    await t.until(() => t.outcomes.length === 2, 'the next reply');
    expect(t.outcomes).toEqual(['cancelled', 'stored']);
    expect(slow.calls).toHaveLength(2);
    expect((await t.history()).at(-1)).toMatchObject({
      content: 'Fine.',
      metadata: { reply: { inReplyTo: fourth.id } },
    });
    await t.worker.stop();
  });

  it('a reply paused for a client tool is closed: the call gets a cancelled result and nothing resumes it', async () => {
    const slow = slowModel((index) => ({
      deltas: index === 0 ? [] : ['Hello again.'],
      finish: true,
      toolCall: index === 0,
    }));
    const t = await setup(slow.model, {
      tools: [{ name: 'ask_user', description: 'Ask', parameters: { type: 'object' }, kind: 'client' }],
    });
    const user = await t.ask('Book a table');
    await t.until(() => t.outcomes.length === 1, 'the pause');
    const paused = await t.core.conversations.get(WS, t.conversation.id);
    expect(paused.pendingToolCalls).toHaveLength(1);
    const callId = paused.pendingToolCalls[0]!.id;

    expect(await t.core.replies.cancel(WS, t.conversation.id)).toEqual({ cancelled: [user.id] });
    expect((await t.core.conversations.get(WS, t.conversation.id)).pendingToolCalls).toEqual([]);
    const history = await t.history();
    expect(history.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Book a table'],
      ['assistant', ''],
      ['tool', '{"error":"cancelled"}'],
      ['assistant', ''],
    ]);
    expect(history[2]!.toolCallId).toBe(callId);
    expect(history[3]!.metadata.reply).toMatchObject({ inReplyTo: user.id, finishReason: 'cancelled', step: 2 });
    expect(await t.cancelledEvents()).toEqual([{ conversationId: t.conversation.id, inReplyTo: user.id }]);
    // The call no longer waits; the next message gets a reply of its own (the old one is not resumed).
    const late = await t.core.replies
      .submitToolResults(WS, t.conversation.id, { results: [{ toolCallId: callId, output: 1 }] })
      .catch((error: unknown) => error);
    expect(isParleyError(late) && late.code).toBe('conflict');
    const next = await t.ask('Hello?');
    await t.until(() => t.outcomes.length === 2, 'the next reply');
    expect(t.outcomes).toEqual(['paused', 'stored']);
    expect((await t.history()).at(-1)).toMatchObject({
      content: 'Hello again.',
      metadata: { reply: { inReplyTo: next.id, step: 1 } },
    });
    expect(slow.calls[1]!.request.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'user',
    ]);
    await t.worker.stop();
  });

  it('a reply calling a webhook tool: the call is aborted and the reply closed', async () => {
    const slow = slowModel(() => ({ deltas: ['Let me look.'], toolCall: true }));
    let sent = 0;
    const transport: WebhookTransport = {
      send: (_request, signal) => {
        sent += 1;
        return new Promise((resolve) =>
          signal?.addEventListener('abort', () =>
            resolve({ status: null, error: 'aborted', responseBody: null, durationMs: 0, retryAfterMs: null }),
          ),
        );
      },
    };
    const t = await setup(
      slow.model,
      {
        tools: [
          {
            name: 'lookup',
            description: 'Look up',
            parameters: { type: 'object' },
            kind: 'webhook',
            url: 'https://tools.example.com/lookup',
          },
        ],
      },
      { transport },
    );
    const user = await t.ask('Find it');
    await t.until(() => sent === 1, 'the webhook call');
    expect(await t.core.replies.cancel(WS, t.conversation.id)).toEqual({ cancelled: [user.id] });
    await t.until(() => t.outcomes.length === 1, 'the worker to stop');
    expect(t.outcomes).toEqual(['cancelled']);
    const history = await t.history();
    expect(history.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Find it'],
      ['assistant', 'Let me look.'],
      ['tool', '{"error":"cancelled"}'],
      ['assistant', ''],
    ]);
    expect(history[3]!.metadata.reply).toMatchObject({ finishReason: 'cancelled', step: 2 });
    expect(slow.calls).toHaveLength(1);
    await t.worker.stop();
  });

  it('a reply whose worker died after the cancel is acknowledged by the next worker without being made', async () => {
    const slow = slowModel(() => ({ deltas: ['never'], finish: true }));
    const queue = new MemoryReplyQueue({ leaseMs: 200 });
    const t = await setup(slow.model, {}, { queue, start: false });
    const user = await t.ask('Hello');
    // A worker leases the request, then dies.
    expect(await queue.lease(0, { models: ['tiny'] })).not.toBeNull();
    expect(await t.core.replies.cancel(WS, t.conversation.id)).toEqual({ cancelled: [user.id] });
    await sleep(300);
    t.worker.start();
    await t.until(() => t.outcomes.length === 1, 'the next worker');
    expect(t.outcomes).toEqual(['cancelled']);
    expect(slow.calls).toHaveLength(0);
    expect(await queue.size()).toBe(0);
    await t.worker.stop();
  });

  it('answers 404 for an unknown conversation', async () => {
    const t = await setup(slowModel(() => ({ deltas: ['x'], finish: true })).model, {}, { start: false });
    const error = await t.core.replies.cancel(WS, 'conv_nope').catch((caught: unknown) => caught);
    expect(isParleyError(error) && error.code).toBe('not_found');
  });
});
