/**
 * @module One agent reply as the AI SDK's UI message stream: the items of a conversation's live
 * stream translated into the chunks `useChat` reads (docs/ai-sdk-chat.md). No I/O: the route
 * opens the stream and writes the chunks.
 */
import type { Message, ReplyRequiresAction, StreamItem, ToolCall } from '@parley/core';
import type { UIMessageChunk } from 'ai';

/** Options of {@link replyChunks}. */
export interface ReplyChunksOptions {
  /** The message the reply answers: `metadata.reply.inReplyTo` of each of its steps. */
  inReplyTo: string;
  /**
   * A message id: stored messages up to this one (by id) are known to the client and not sent.
   * Messages after it that are not this reply's steps are `tool` results (only this reply runs in
   * the conversation until it ends) or other messages, which are skipped.
   */
  after: string;
  /** The `start` chunk's `messageId`: the reply's first stored step, when there is one. */
  messageId?: string;
  /**
   * A resumed stream (`GET /api/chat/:id/stream`): deltas are not stored, so the step being
   * generated when the stream opened is sent whole once it is stored; later steps stream live.
   */
  resumed?: boolean;
}

/** What {@link replyChunks} yields: a chunk, or `keep-alive` after a quiet spell (an SSE comment). */
export type ChatStreamPart = UIMessageChunk | 'keep-alive';

type FinishReason = NonNullable<Extract<UIMessageChunk, { type: 'finish' }>['finishReason']>;
const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>([
  'stop',
  'length',
  'content-filter',
  'tool-calls',
  'error',
  'other',
]);

/** `metadata.reply` of a stored step, as far as the translation reads it. */
interface StepMetadata {
  inReplyTo?: unknown;
  finishReason?: unknown;
  stepLimitReached?: unknown;
}

/**
 * Translates a conversation's stream items into the UI message stream of one reply (the AI SDK's
 * protocol, `x-vercel-ai-ui-message-stream: v1`): `start`, then per step `start-step`, its text as
 * `text-start`/`text-delta`/`text-end`, its tool calls as `tool-input-available` (with a
 * `tool-approval-request` for a call that awaits approval) and their results as
 * `tool-output-available`, `finish-step`; then `finish` when the reply is stored (`finishReason`
 * of its last step) or paused for tools (`tool-calls`), an `abort` chunk when it was stopped
 * (`POST …/reply/cancel`), or an `error` chunk when it was given up or the conversation was
 * completed. Ends after `finish`, `abort` or `error`; items of other replies are
 * skipped. Stored steps not seen as deltas (a replay, or the step a resumed stream caught midway)
 * are sent whole. A retried model call (`attempt` > 1) after some text starts a new text part.
 */
export async function* replyChunks(
  items: AsyncIterable<StreamItem> | Iterable<StreamItem>,
  options: ReplyChunksOptions,
): AsyncGenerator<ChatStreamPart> {
  const { inReplyTo, after } = options;
  const ours = (data: { inReplyTo: string | null }) => data.inReplyTo === inReplyTo;
  /**
   * The open step (`start-step` sent, `finish-step` not yet): none, one being generated (begun by
   * live deltas or calls), or one stored, whose tool results may follow.
   */
  let step: 'none' | 'live' | 'stored' = 'none';
  let text: { id: string; attempt: number } | null = null;
  let parts = 0;
  const announced = new Set<string>();
  /** Calls of the open stored step whose results have not been sent yet. */
  const unanswered = new Set<string>();
  /** The open stored step is at the step limit: its calls' (error) results end the reply. */
  let lastStep = false;
  let withholding = options.resumed === true;
  /** A live signal of this reply came: what follows is not from the history read at opening. */
  let live = false;

  /** Opens the step being generated, after the stored one before it. */
  function* liveStep(): Generator<UIMessageChunk> {
    if (step === 'live') return;
    yield* closeStep();
    step = 'live';
    yield { type: 'start-step' };
  }
  function* closeText(): Generator<UIMessageChunk> {
    if (!text) return;
    yield { type: 'text-end', id: text.id };
    text = null;
  }
  function* closeStep(): Generator<UIMessageChunk> {
    yield* closeText();
    if (step === 'none') return;
    step = 'none';
    yield { type: 'finish-step' };
  }
  function* announce(call: ToolCall): Generator<UIMessageChunk> {
    if (announced.has(call.id)) return;
    announced.add(call.id);
    yield { type: 'tool-input-available', toolCallId: call.id, toolName: call.name, input: call.arguments };
  }
  function* wholeText(content: string): Generator<UIMessageChunk> {
    if (content === '') return;
    const id = `text-${++parts}`;
    yield { type: 'text-start', id };
    yield { type: 'text-delta', id, delta: content };
    yield { type: 'text-end', id };
  }

  /** Chunks of a stored message; `true` once the reply is over. */
  function* stored(message: Message): Generator<UIMessageChunk, boolean> {
    if (message.id <= after) return false;
    if (message.role === 'tool' && message.toolCallId !== null) {
      yield { type: 'tool-output-available', toolCallId: message.toolCallId, output: output(message.content) };
      unanswered.delete(message.toolCallId);
      if (!lastStep || unanswered.size > 0) return false;
      yield* closeStep();
      yield { type: 'finish', finishReason: 'tool-calls' };
      return true;
    }
    const reply = message.metadata.reply as StepMetadata | undefined;
    if (message.role !== 'assistant' || reply?.inReplyTo !== inReplyTo) return false;
    // A step seen being generated is this one; any other is sent whole.
    if (step === 'live') yield* closeText();
    else {
      yield* closeStep();
      yield { type: 'start-step' };
      yield* wholeText(message.content);
    }
    step = 'stored';
    for (const call of message.toolCalls ?? []) {
      yield* announce(call);
      unanswered.add(call.id);
    }
    if (reply.finishReason === 'cancelled') {
      yield* closeStep();
      yield { type: 'abort' };
      return true;
    }
    // The step a resumed stream caught midway is now sent; the next ones are seen from their start.
    if (withholding && live) withholding = false;
    if (message.toolCalls && message.toolCalls.length > 0) {
      lastStep = reply.stepLimitReached === true;
      return false;
    }
    yield* closeStep();
    yield { type: 'finish', finishReason: finishReason(reply.finishReason) };
    return true;
  }

  function* paused(data: ReplyRequiresAction): Generator<UIMessageChunk> {
    for (const call of data.toolCalls) yield* announce(call);
    // A client tool is answered with its output, whatever its `requiresApproval`; other calls are approved.
    for (const call of data.toolCalls)
      if (call.requiresApproval && call.kind !== 'client')
        yield { type: 'tool-approval-request', approvalId: call.id, toolCallId: call.id };
    yield* closeStep();
    yield { type: 'finish', finishReason: 'tool-calls' };
  }

  /** The chunks of one item; `true` once the reply is over. */
  function* handle(item: StreamItem): Generator<ChatStreamPart, boolean> {
    switch (item.type) {
      case 'message':
      case 'tool.result':
        if (yield* stored(item.message)) return true;
        break;
      case 'message.delta': {
        if (!ours(item.data)) break;
        live = true;
        if (withholding) break;
        yield* liveStep();
        if (text && text.attempt !== item.data.attempt) yield* closeText();
        if (!text) {
          text = { id: `text-${++parts}`, attempt: item.data.attempt };
          yield { type: 'text-start', id: text.id };
        }
        yield { type: 'text-delta', id: text.id, delta: item.data.delta };
        break;
      }
      case 'tool.call': {
        if (!ours(item.data)) break;
        live = true;
        if (withholding) break;
        yield* liveStep();
        // Text after the call is a new part, after the call's, as the model wrote them.
        yield* closeText();
        yield* announce(item.data.toolCall);
        break;
      }
      case 'reply.requires_action': {
        if (!ours(item.data)) break;
        yield* paused(item.data);
        return true;
      }
      case 'reply.failed': {
        if (!ours(item.data)) break;
        yield { type: 'error', errorText: item.data.error };
        return true;
      }
      case 'reply.cancelled': {
        // Stopped before it stored any text (text it had is a stored message, sent above).
        if (!ours(item.data)) break;
        yield* closeStep();
        yield { type: 'abort' };
        return true;
      }
      case 'conversation.completed': {
        yield { type: 'error', errorText: 'The conversation was completed; the reply was not stored.' };
        return true;
      }
      case 'idle':
        yield 'keep-alive';
        break;
      default:
        // Items this translation does not know of (newer stream events) are not part of a reply's chunks.
        break;
    }
    return false;
  }

  yield { type: 'start', ...(options.messageId !== undefined && { messageId: options.messageId }) };
  /**
   * Live signals of the next step that came before the results of the stored step's calls: on
   * PostgreSQL the feed's signal can overtake the stored result, which is read from the database.
   * They wait until those results are sent, so each result stays in its own step.
   */
  const held: StreamItem[] = [];
  for await (const item of items) {
    const liveSignal = item.type === 'message.delta' || item.type === 'tool.call';
    if (liveSignal && unanswered.size > 0 && ours(item.data)) {
      held.push(item);
      continue;
    }
    if (yield* handle(item)) return;
    while (unanswered.size === 0 && held.length > 0) if (yield* handle(held.shift()!)) return;
  }
}

/** A `tool` message's content, stored as JSON text, as the value it holds (the text itself when it is not JSON). */
function output(content: string): unknown {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content;
  }
}

function finishReason(stored: unknown): FinishReason {
  return typeof stored === 'string' && FINISH_REASONS.has(stored) ? (stored as FinishReason) : 'other';
}
