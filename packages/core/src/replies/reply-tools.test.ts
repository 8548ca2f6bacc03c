/** @module Multi-step replies with tools on the memory adapters and a scripted model: step limits, unknown tools, pauses, usage, reply.failed. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type AgentCreateInput, type ReplyOutcome } from '../index.js';
import { recordedEvents } from '../test-support/events.js';
import { scriptedModel, type ScriptedTurn } from '../testing/scripted-model.js';
import { ReplyWorker } from './reply-worker.js';

async function setup(turns: ScriptedTurn[], settings: Pick<AgentCreateInput, 'tools' | 'maxSteps'>) {
  const adapters = memoryAdapters();
  const model = scriptedModel(turns);
  const core = createCore(adapters, { models: { tiny: model }, replyRetryDelaysMs: [1, 1] });
  const agent = await core.agents.create(
    { workspaceId: 'ws1' },
    { name: 'Ada', description: '', model: 'tiny', ...settings },
  );
  const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id, userId: 'u1' });
  const outcomes: ReplyOutcome[] = [];
  const worker = new ReplyWorker({
    replies: core.replies,
    queue: adapters.replyQueue,
    pollMs: 10,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  worker.start();
  const ask = async (content: string) => {
    const message = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'user',
      content,
    });
    await core.replies.request({ workspaceId: 'ws1' }, conversation.id);
    return message;
  };
  const settle = async (count: number) => {
    for (let i = 0; i < 500 && outcomes.length < count; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(outcomes.slice(0, count)).toHaveLength(count);
    return outcomes;
  };
  const history = async () =>
    (await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { limit: 100 })).messages;
  return { core, adapters, model, agent, conversation, worker, ask, settle, history };
}

const client = {
  name: 'ask_user',
  description: 'Ask the user',
  parameters: { type: 'object' },
  kind: 'client',
} as const;

describe('replies with tools', () => {
  it("ends at maxSteps: the last step's calls get an error result and are not made; usage counts every step", async () => {
    const call = (id: string): ScriptedTurn => ({
      toolCalls: [{ id, name: 'ask_user', arguments: { q: id } }],
      usage: { inputTokens: 10, outputTokens: 3 },
    });
    const t = await setup([call('c1')], { tools: [client], maxSteps: 1 });
    await t.ask('Hi');
    await t.settle(1);
    const history = await t.history();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(history[1]!.metadata.reply).toMatchObject({ step: 1, stepLimitReached: true, finishReason: 'tool-calls' });
    expect(JSON.parse(history[2]!.content).error).toMatch(/step limit/);
    expect((await t.core.conversations.get({ workspaceId: 'ws1' }, t.conversation.id)).pendingToolCalls).toEqual([]);
    expect(await t.core.usage.totals({ workspaceId: 'ws1' }, { groupBy: 'user' })).toMatchObject({
      totals: [{ key: 'u1', inputTokens: 10, outputTokens: 3, replies: 1 }],
    });
    await t.worker.stop();
  });

  it('gives the model an error for a tool it does not have, and goes on', async () => {
    const t = await setup([{ toolCalls: [{ id: 'c1', name: 'nope', arguments: {} }] }, { deltas: ['Sorry.'] }], {
      tools: [client],
    });
    await t.ask('Hi');
    await t.settle(1);
    const history = await t.history();
    expect(history.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Hi'],
      ['assistant', ''],
      ['tool', JSON.stringify({ error: "No tool is named 'nope'." })],
      ['assistant', 'Sorry.'],
    ]);
    // The second step saw the call and its result, right after it; and the tool definitions.
    expect(t.model.requests[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(t.model.requests[0]!.tools).toEqual([
      { name: 'ask_user', description: 'Ask the user', parameters: { type: 'object' } },
    ]);
    await t.worker.stop();
  });

  it('pauses for a client tool; a request while paused is skipped; answers resume it; reply.requires_action is recorded once', async () => {
    const t = await setup(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'ask_user', arguments: {} },
            { id: 'c2', name: 'ask_user', arguments: {} },
          ],
        },
        { deltas: ['Done.'] },
      ],
      { tools: [client] },
    );
    await t.ask('Hi');
    expect(await t.settle(1)).toEqual(['paused']);
    await t.core.replies.request({ workspaceId: 'ws1' }, t.conversation.id);
    expect(await t.settle(2)).toEqual(['paused', 'skipped']);
    // Answered by Parley's ids of the calls, not the model's `c1` and `c2`.
    const [c1, c2] = (await t.core.conversations.get({ workspaceId: 'ws1' }, t.conversation.id)).pendingToolCalls.map(
      (call) => call.id,
    );
    expect(
      await t.core.replies.submitToolResults({ workspaceId: 'ws1' }, t.conversation.id, {
        results: [{ toolCallId: c1!, output: 'a' }],
      }),
    ).toMatchObject({ pendingToolCalls: [{ id: c2 }] });
    // Not resumed yet: one call still waits.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(t.model.requests).toHaveLength(1);
    await t.core.replies.submitToolResults({ workspaceId: 'ws1' }, t.conversation.id, {
      results: [{ toolCallId: c2!, approved: false }],
    });
    expect(await t.settle(3)).toEqual(['paused', 'skipped', 'stored']);
    const tools = (await t.history()).filter((message) => message.role === 'tool').map((message) => message.content);
    expect(tools).toEqual([JSON.stringify('a'), JSON.stringify({ error: 'rejected' })]);
    const types = (await recordedEvents(t.adapters.storage)).map((event) => event.type);
    expect(types.filter((type) => type === 'reply.requires_action')).toHaveLength(1);
    await t.worker.stop();
  });

  it('of two concurrent answers to one paused step, each is either kept or refused with 409 — never lost', async () => {
    const t = await setup(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'ask_user', arguments: {} },
            { id: 'c2', name: 'ask_user', arguments: {} },
          ],
        },
        { deltas: ['Done.'] },
      ],
      { tools: [client] },
    );
    await t.ask('Hi');
    expect(await t.settle(1)).toEqual(['paused']);
    const ids = (await t.core.conversations.get({ workspaceId: 'ws1' }, t.conversation.id)).pendingToolCalls.map(
      (call) => call.id,
    );
    const answer = (id: string) =>
      t.core.replies.submitToolResults({ workspaceId: 'ws1' }, t.conversation.id, {
        results: [{ toolCallId: id, output: id }],
      });
    const settled = await Promise.allSettled(ids.map(answer));
    const kept = ids.filter((_, index) => settled[index]!.status === 'fulfilled');
    const refused = settled.flatMap((result) =>
      result.status === 'rejected' ? [(result.reason as { code: string }).code] : [],
    );
    expect(refused.every((code) => code === 'conflict')).toBe(true);
    expect(kept.length).toBeGreaterThan(0);
    const waiting = (await t.core.conversations.get({ workspaceId: 'ws1' }, t.conversation.id)).pendingToolCalls.map(
      (call) => call.id,
    );
    expect(waiting).toEqual(ids.filter((id) => !kept.includes(id)));
    for (const id of waiting) await answer(id);
    expect(await t.settle(2)).toEqual(['paused', 'stored']);
    const tools = (await t.history()).filter((message) => message.role === 'tool').map((message) => message.content);
    expect(tools).toEqual(ids.map((id) => JSON.stringify(id)));
    await t.worker.stop();
  });

  it('records reply.failed when the provider fails three times', async () => {
    const t = await setup([{ error: Object.assign(new Error('boom'), { name: 'APICallError', statusCode: 500 }) }], {});
    const user = await t.ask('Hi');
    expect(await t.settle(1)).toEqual(['failed']);
    const failed = (await recordedEvents(t.adapters.storage)).filter((event) => event.type === 'reply.failed');
    expect(failed.map((event) => event.data)).toEqual([
      {
        conversationId: t.conversation.id,
        inReplyTo: user.id,
        error: 'The language model failed 3 times (APICallError (HTTP 500)); the reply was given up.',
      },
    ]);
    await t.worker.stop();
  });
});
