/** @module Agent replies on the memory adapters with a scripted model: who replies, what is stored, retries, order. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type Message } from '../index.js';
import type { FeedSignal } from '../ports/conversation-feed.js';
import { rejection } from '../test-support/errors.js';
import { recordedEvents } from '../test-support/events.js';
import { scriptedModel, type ScriptedTurn } from '../testing/scripted-model.js';
import { ReplyWorker } from './reply-worker.js';

async function setup(
  turns: ScriptedTurn[] = [{ deltas: ['Hi', ' there'] }],
  agentFields: Record<string, unknown> = {},
) {
  const adapters = memoryAdapters();
  const model = scriptedModel(turns);
  const core = createCore(adapters, { models: { tiny: model }, replyRetryDelaysMs: [5, 5] });
  const agent = await core.agents.create(
    { workspaceId: 'ws1' },
    {
      name: 'Ada',
      description: 'helper',
      model: 'tiny',
      systemPrompt: 'Be brief.',
      temperature: 0.4,
      maxTokens: 64,
      ...agentFields,
    },
  );
  const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
  const signals: FeedSignal[] = [];
  await core.feed.subscribe({ workspaceId: 'ws1' }, conversation.id, (signal) => signals.push(signal));
  const logs: Array<{ fields: object; message: string }> = [];
  const logger = {
    debug: (fields: object, message: string) => logs.push({ fields, message }),
    info: (fields: object, message: string) => logs.push({ fields, message }),
    warn: (fields: object, message: string) => logs.push({ fields, message }),
    error: (fields: object, message: string) => logs.push({ fields, message }),
  };
  /** Relays the outbox once (what the delivery worker's relay does), queueing automatic replies. */
  const relay = async () => {
    let queued = 0;
    for (;;) {
      const batch = await adapters.storage.outbox.take(100, 0);
      if (!batch) return queued;
      queued += await core.replies.queueAutomaticReplies(batch);
      await adapters.storage.outbox.ack(batch);
    }
  };
  const outcomes: string[] = [];
  const worker = new ReplyWorker({
    replies: core.replies,
    queue: adapters.replyQueue,
    pollMs: 20,
    logger,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  const settle = async (count: number) => {
    for (let i = 0; i < 500 && outcomes.length < count; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(outcomes).toHaveLength(count);
  };
  const history = async () => (await core.conversations.history({ workspaceId: 'ws1' }, conversation.id)).messages;
  return { core, adapters, model, agent, conversation, signals, logs, relay, worker, settle, outcomes, history };
}

/** A log entry naming `model`, in its fields and its message. */
const naming = (model: string) => ({
  fields: expect.objectContaining({ model }),
  message: expect.stringContaining(`model '${model}'`),
});

describe('ReplyService', () => {
  it('answers a user message from system prompt, history in order, temperature and max tokens, and stores metadata.reply', async () => {
    const t = await setup([{ deltas: ['Hi', ' there'], usage: { inputTokens: 21, outputTokens: 2 } }]);
    const first = await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'system',
      content: 'Context.',
    });
    const user = await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Hello?',
    });
    expect(await t.relay()).toBe(1);
    t.worker.start();
    await t.settle(1);
    await t.worker.stop();
    expect(t.model.requests).toEqual([
      {
        system: 'Be brief.',
        messages: [
          { role: 'system', content: 'Context.' },
          { role: 'user', content: 'Hello?' },
        ],
        temperature: 0.4,
        maxTokens: 64,
      },
    ]);
    const messages = await t.history();
    expect(messages.map((m) => m.id).slice(0, 2)).toEqual([first.id, user.id]);
    const reply = messages[2] as Message;
    expect(reply).toMatchObject({
      role: 'assistant',
      content: 'Hi there',
      metadata: {
        reply: { inReplyTo: user.id, model: 'tiny', finishReason: 'stop', usage: { inputTokens: 21, outputTokens: 2 } },
      },
    });
    const events = await recordedEvents(t.adapters.storage);
    expect(events.filter((event) => event.type === 'message.received').map((event) => event.data)).toEqual([reply]);
    const kinds = t.signals.map((signal) => signal.type);
    expect(kinds.indexOf('message.delta')).toBeLessThan(kinds.lastIndexOf('message'));
    expect(t.signals.filter((s) => s.type === 'message.delta')).toEqual([
      { type: 'message.delta', inReplyTo: user.id, delta: 'Hi', attempt: 1 },
      { type: 'message.delta', inReplyTo: user.id, delta: ' there', attempt: 1 },
    ]);
    expect(t.signals.at(-1)).toEqual({ type: 'message', messageId: reply.id });
  });

  it('queues nothing for assistant or system messages, autoReply: false, inactive agents or unconfigured models', async () => {
    const t = await setup(undefined, { autoReply: false });
    await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Hello?',
    });
    expect(await t.relay()).toBe(0);
    await t.core.agents.update({ workspaceId: 'ws1' }, t.agent.id, { autoReply: true });
    await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'assistant',
      content: 'Hm.',
    });
    await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'system',
      content: 'Note.',
    });
    expect(await t.relay()).toBe(0);
    await t.core.agents.update({ workspaceId: 'ws1' }, t.agent.id, { model: 'modelA-4' });
    await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Again?',
    });
    expect(await t.relay()).toBe(0);
    expect(await t.adapters.replyQueue.size()).toBe(0);
  });

  it('POST reply: queues a reply to the latest message even with autoReply off; 409 when it cannot reply', async () => {
    const t = await setup(undefined, { autoReply: false });
    const user = await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Hello?',
    });
    expect(await t.core.replies.request({ workspaceId: 'ws1' }, t.conversation.id)).toEqual({
      conversationId: t.conversation.id,
      inReplyTo: user.id,
    });
    t.worker.start();
    await t.settle(1);
    await t.worker.stop();
    expect((await t.history()).at(-1)).toMatchObject({ role: 'assistant', content: 'Hi there' });
    expect((await rejection(t.core.replies.request({ workspaceId: 'ws1' }, 'conv_unknown'))).code).toBe('not_found');
    await t.core.agents.update({ workspaceId: 'ws1' }, t.agent.id, { model: 'modelB-3' });
    expect((await rejection(t.core.replies.request({ workspaceId: 'ws1' }, t.conversation.id))).code).toBe('conflict');
    await t.core.conversations.update({ workspaceId: 'ws1' }, t.conversation.id, { status: 'completed' });
    expect((await rejection(t.core.replies.request({ workspaceId: 'ws1' }, t.conversation.id))).code).toBe('conflict');
  });

  it('a provider failing twice then answering yields one reply; the retries restart the deltas', async () => {
    const t = await setup([
      { deltas: ['par'], error: new Error('boom 1') },
      { error: new Error('boom 2') },
      { deltas: ['ok'] },
    ]);
    await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Hello?',
    });
    await t.relay();
    t.worker.start();
    await t.settle(1);
    await t.worker.stop();
    expect(t.outcomes).toEqual(['stored']);
    expect(t.model.requests).toHaveLength(3);
    expect((await t.history()).filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['ok']);
    expect(
      t.signals
        .filter((s) => s.type === 'message.delta')
        .map((s) => s.type === 'message.delta' && [s.delta, s.attempt]),
    ).toEqual([
      ['par', 1],
      ['ok', 3],
    ]);
  });

  it('a provider failing always: nothing stored, reply.failed on the feed, log lines without content', async () => {
    const t = await setup([{ error: Object.assign(new Error('secret prompt text echoed'), { statusCode: 500 }) }]);
    const user = await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Top secret question',
    });
    await t.relay();
    t.worker.start();
    await t.settle(1);
    await t.worker.stop();
    expect(t.outcomes).toEqual(['failed']);
    expect(t.model.requests).toHaveLength(3);
    expect((await t.history()).map((m) => m.role)).toEqual(['user']);
    expect(t.signals.at(-1)).toEqual({
      type: 'reply.failed',
      inReplyTo: user.id,
      error: expect.stringContaining('HTTP 500'),
    });
    const logged = JSON.stringify(t.logs);
    expect(logged).toContain('reply given up');
    expect(logged).not.toContain('secret');
  });

  it('never stores after completed: a conversation completed mid-generation gets no reply', async () => {
    let release!: () => void;
    const t = await setup([{ deltas: ['late'], hold: new Promise<void>((resolve) => (release = resolve)) }]);
    await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'Hello?',
    });
    await t.relay();
    t.worker.start();
    for (let i = 0; i < 200 && t.model.requests.length === 0; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await t.core.conversations.update({ workspaceId: 'ws1' }, t.conversation.id, { status: 'completed' });
    release();
    await t.settle(1);
    await t.worker.stop();
    expect(t.outcomes).toEqual(['skipped']);
    expect((await t.history()).map((m) => m.role)).toEqual(['user']);
  });

  it('one reply at a time per conversation, in the order asked; a message answered already is not answered twice', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const t = await setup([{ deltas: ['one'], hold: gate }, { deltas: ['two'] }]);
    const m1 = await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'first',
    });
    const m2 = await t.core.conversations.sendMessage({ workspaceId: 'ws1' }, t.conversation.id, {
      role: 'user',
      content: 'second',
    });
    await t.relay();
    t.worker.start();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.model.requests).toHaveLength(1);
    release();
    await t.settle(2);
    // The same request handed out again (at-least-once) finds its message answered.
    const again = {
      id: 'rpl_again',
      workspaceId: 'ws1',
      conversationId: t.conversation.id,
      inReplyTo: m1.id,
      requestedAt: Date.now(),
    };
    await t.adapters.replyQueue.enqueue({ ...again, model: 'tiny' });
    await t.settle(3);
    await t.worker.stop();
    expect(t.outcomes).toEqual(['stored', 'stored', 'skipped']);
    const replies = (await t.history()).filter((m) => m.role === 'assistant');
    expect(replies.map((m) => [m.content, (m.metadata.reply as { inReplyTo: string }).inReplyTo])).toEqual([
      ['one', m1.id],
      ['two', m2.id],
    ]);
  });

  it('routes requests by model; the relay names once the model it leaves to others', async () => {
    const adapters = memoryAdapters();
    const relayLogs: Array<{ fields: object; message: string }> = [];
    const relayLogger = { warn: (fields: object, message: string) => relayLogs.push({ fields, message }), info() {} };
    // Two processes over one backend: one without the agent's model, one with it.
    const bare = createCore(adapters, { models: { other: scriptedModel([{ deltas: ['never'] }]) } });
    const capable = createCore(adapters, { models: { tiny: scriptedModel([{ deltas: ['made'] }]) } });
    const agent = await capable.agents.create({ workspaceId: 'ws1' }, { name: 'Ada', description: '', model: 'tiny' });
    const conversation = await capable.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    for (const content of ['one', 'two']) {
      await capable.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content });
    }
    const batch = (await adapters.storage.outbox.take(100, 0))!;
    expect(await bare.replies.queueAutomaticReplies(batch, relayLogger)).toBe(2);
    expect(relayLogs).toEqual([naming('tiny')]);
    expect(await adapters.replyQueue.lease(0, { models: bare.replies.modelNames() })).toBeNull();
    const leased = await adapters.replyQueue.lease(0, { models: capable.replies.modelNames() });
    expect(leased?.job).toMatchObject({ conversationId: conversation.id, model: 'tiny' });
  });

  it("a request whose agent moved to another model goes to that model's workers, logged", async () => {
    const adapters = memoryAdapters();
    const old = createCore(adapters, { models: { tiny: scriptedModel([{ deltas: ['old'] }]) } });
    const next = createCore(adapters, { models: { other: scriptedModel([{ deltas: ['new'] }]) } });
    const fields = { name: 'Ada', description: '', model: 'tiny', autoReply: false };
    const agent = await old.agents.create({ workspaceId: 'ws1' }, fields);
    const conversation = await old.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    await old.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'hi' });
    await old.replies.request({ workspaceId: 'ws1' }, conversation.id);
    await next.agents.update({ workspaceId: 'ws1' }, agent.id, { model: 'other' });
    const logs: Array<{ fields: object; message: string }> = [];
    const warn = (logged: object, message: string) => void logs.push({ fields: logged, message });
    const logger = { debug() {}, info() {}, error() {}, warn };
    const outcomes: string[] = [];
    const onOutcome = (outcome: string) => void outcomes.push(outcome);
    const workers = [old, next].map(
      (core) => new ReplyWorker({ replies: core.replies, queue: adapters.replyQueue, pollMs: 20, logger, onOutcome }),
    );
    workers[0]!.start();
    for (let i = 0; i < 200 && outcomes.length < 1; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(outcomes).toEqual(['deferred']);
    expect(logs).toEqual([naming('other')]);
    workers[1]!.start();
    for (let i = 0; i < 200 && outcomes.length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    await Promise.all(workers.map((worker) => worker.stop()));
    expect(outcomes).toEqual(['deferred', 'stored']);
    const history = await next.conversations.history({ workspaceId: 'ws1' }, conversation.id);
    expect(history.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'new' });
  });
});

describe('agent models of a core', () => {
  it("are the spec's three plus every configured name, in validation", async () => {
    const adapters = memoryAdapters();
    const core = createCore(adapters, { models: { 'llama3.2:3b': scriptedModel([{}]) } });
    expect(core.agentModels).toEqual(['modelA-4', 'modelA-3.5-turbo', 'modelB-3', 'llama3.2:3b']);
    const agent = await core.agents.create(
      { workspaceId: 'ws1' },
      { name: 'A', description: '', model: 'llama3.2:3b' },
    );
    expect(agent.model).toBe('llama3.2:3b');
    expect((await rejection(core.agents.update({ workspaceId: 'ws1' }, agent.id, { model: 'other' }))).code).toBe(
      'validation_failed',
    );
    const plain = createCore(memoryAdapters());
    expect(
      (
        await rejection(
          plain.agents.create({ workspaceId: 'ws1' }, { name: 'A', description: '', model: 'llama3.2:3b' }),
        )
      ).code,
    ).toBe('validation_failed');
  });

  it('refuses values that are not models, and bad names', () => {
    expect(() => createCore(memoryAdapters(), { models: { m: {} as never } })).toThrow(TypeError);
    expect(() => createCore(memoryAdapters(), { models: { 'bad name': scriptedModel([{}]) } })).toThrow(TypeError);
  });
});
