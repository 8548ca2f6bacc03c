/** @module `replyChunks` on stream items given in order: what the route tests cannot easily provoke. */
import type { Message, StreamItem } from '@parley/core';
import { describe, expect, it } from 'vitest';
import { replyChunks, type ChatStreamPart, type ReplyChunksOptions } from './chat-chunks.js';

const USER = 'msg_01A';
const options: ReplyChunksOptions = { inReplyTo: USER, after: USER };

function step(id: string, content: string, extra: Partial<Message> = {}, inReplyTo = USER): StreamItem {
  const message: Message = {
    id,
    conversationId: 'conv_1',
    content,
    role: 'assistant',
    metadata: { reply: { inReplyTo, model: 'm', finishReason: 'stop', usage: {}, step: 1 } },
    toolCalls: null,
    toolCallId: null,
    createdAt: '2026-11-27T00:00:00.000Z',
    ...extra,
  };
  return { type: 'message', cursor: `c-${id}`, message };
}
function result(id: string, toolCallId: string, content: string): StreamItem {
  const { message } = step(id, content) as { message: Message };
  return { type: 'tool.result', cursor: `c-${id}`, message: { ...message, role: 'tool', metadata: {}, toolCallId } };
}
const delta = (text: string, attempt = 1, inReplyTo: string | null = USER): StreamItem => ({
  type: 'message.delta',
  data: { inReplyTo, delta: text, attempt },
});

async function chunks(items: StreamItem[], given: ReplyChunksOptions = options): Promise<ChatStreamPart[]> {
  const out: ChatStreamPart[] = [];
  for await (const part of replyChunks(items, given)) out.push(part);
  return out;
}

describe('replyChunks', () => {
  it("skips other replies' items and messages the client has, and ends at the reply's last step", async () => {
    const out = await chunks([
      step('msg_00Z', 'older reply', {}, 'msg_00Y'),
      delta('other', 1, 'msg_09X'),
      delta('Hi'),
      { type: 'idle' },
      step('msg_01B', 'Hi'),
      delta('never sent'),
    ]);
    expect(out).toEqual([
      { type: 'start' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hi' },
      'keep-alive',
      { type: 'text-end', id: 'text-1' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('starts a new text part when a failed model call is tried again', async () => {
    const out = await chunks([delta('Hel'), delta('Hello', 2), step('msg_01B', 'Hello')]);
    expect(out.filter((part) => typeof part !== 'string' && part.type.startsWith('text'))).toEqual([
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hel' },
      { type: 'text-end', id: 'text-1' },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'Hello' },
      { type: 'text-end', id: 'text-2' },
    ]);
  });

  it('sends the step a resumed stream caught midway once stored, whole, and streams the next', async () => {
    const call = { id: 'call_1', name: 'lookup', arguments: { q: 'x' } };
    const out = await chunks(
      [
        delta('Let me ', 1),
        delta('look.', 1),
        step('msg_01B', 'Let me look.', { toolCalls: [call] }),
        result('msg_01C', 'call_1', '{"a":1}'),
        delta('Found'),
        step('msg_01D', 'Found'),
      ],
      { ...options, resumed: true, messageId: 'msg_01B' },
    );
    expect(out).toEqual([
      { type: 'start', messageId: 'msg_01B' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Let me look.' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-available', toolCallId: 'call_1', toolName: 'lookup', input: { q: 'x' } },
      { type: 'tool-output-available', toolCallId: 'call_1', output: { a: 1 } },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'Found' },
      { type: 'text-end', id: 'text-2' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('ends with an error chunk when the conversation is completed or the reply given up', async () => {
    const completed = await chunks([delta('Hi'), { type: 'conversation.completed', conversation: {} as never }]);
    expect(completed.at(-1)).toEqual({
      type: 'error',
      errorText: 'The conversation was completed; the reply was not stored.',
    });
    const failed = await chunks([{ type: 'reply.failed', data: { inReplyTo: USER, error: 'The model failed.' } }]);
    expect(failed).toEqual([{ type: 'start' }, { type: 'error', errorText: 'The model failed.' }]);
  });

  it("keeps a call's result in its step when the next step's deltas overtake it (PostgreSQL's feed)", async () => {
    const call = {
      id: 'call_w',
      name: 'get_weather',
      arguments: {},
      kind: 'webhook' as const,
      requiresApproval: false,
    };
    const out = await chunks([
      step('msg_01B', '', { toolCalls: [call], metadata: { reply: { inReplyTo: USER, finishReason: 'tool-calls' } } }),
      delta('Sun'),
      result('msg_01C', 'call_w', '{"forecast":"sunny"}'),
      delta('ny'),
      step('msg_01D', 'Sunny'),
    ]);
    expect(out).toEqual([
      { type: 'start' },
      { type: 'start-step' },
      { type: 'tool-input-available', toolCallId: 'call_w', toolName: 'get_weather', input: {} },
      { type: 'tool-output-available', toolCallId: 'call_w', output: { forecast: 'sunny' } },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Sun' },
      { type: 'text-delta', id: 'text-1', delta: 'ny' },
      { type: 'text-end', id: 'text-1' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('ends after the results of a step at the step limit, once every one of its calls has one', async () => {
    const call = (id: string) => ({
      id,
      name: 'look',
      arguments: {},
      kind: 'webhook' as const,
      requiresApproval: false,
    });
    const atLimit = { inReplyTo: USER, finishReason: 'tool-calls', stepLimitReached: true };
    const out = await chunks([
      step('msg_01B', '', { toolCalls: [call('call_a'), call('call_b')], metadata: { reply: atLimit } }),
      result('msg_01C', 'call_a', '{"error":"step limit"}'),
      result('msg_01D', 'call_b', '{"error":"step limit"}'),
      delta('never sent'),
    ]);
    expect(out.map((chunk) => (typeof chunk === 'string' ? chunk : chunk.type))).toEqual([
      'start',
      'start-step',
      'tool-input-available',
      'tool-input-available',
      'tool-output-available',
      'tool-output-available',
      'finish-step',
      'finish',
    ]);
    expect(out.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
  });

  it('ends with an abort chunk when the reply is stopped, after the text it had stored', async () => {
    const stopped = { metadata: { reply: { inReplyTo: USER, model: 'm', finishReason: 'cancelled', usage: {} } } };
    const withText = await chunks([delta('Hi'), step('msg_01B', 'Hi', stopped), delta('never sent')]);
    expect(withText).toEqual([
      { type: 'start' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hi' },
      { type: 'text-end', id: 'text-1' },
      { type: 'finish-step' },
      { type: 'abort' },
    ]);
    const before = await chunks([
      { type: 'reply.cancelled', data: { conversationId: 'conv_1', inReplyTo: 'msg_09X' } },
      { type: 'reply.cancelled', data: { conversationId: 'conv_1', inReplyTo: USER } },
      delta('never sent'),
    ]);
    expect(before).toEqual([{ type: 'start' }, { type: 'abort' }]);
  });

  it('pauses with client tools as calls to run and other calls as approval requests', async () => {
    const client = { id: 'call_c', name: 'pick', arguments: {}, kind: 'client' as const, requiresApproval: true };
    const hook = { id: 'call_w', name: 'book', arguments: {}, kind: 'webhook' as const, requiresApproval: true };
    const out = await chunks([
      { type: 'reply.requires_action', data: { conversationId: 'conv_1', inReplyTo: USER, toolCalls: [client, hook] } },
    ]);
    expect(out).toEqual([
      { type: 'start' },
      { type: 'tool-input-available', toolCallId: 'call_c', toolName: 'pick', input: {} },
      { type: 'tool-input-available', toolCallId: 'call_w', toolName: 'book', input: {} },
      { type: 'tool-approval-request', approvalId: 'call_w', toolCallId: 'call_w' },
      { type: 'finish', finishReason: 'tool-calls' },
    ]);
  });
});
