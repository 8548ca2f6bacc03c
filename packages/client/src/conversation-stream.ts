/**
 * @module A conversation's live stream (`GET /api/conversations/:id/stream`, server-sent events) as
 * an async iterator of typed events, parsed with eventsource-parser: it reconnects with
 * `Last-Event-ID` after a dropped connection, and ends on `conversation.completed` or an abort.
 */
import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { ParleyApiError } from './errors.js';
import type * as T from './types.js';

/** A delta of a reply being written: append `delta`; a new `attempt` restarts the text. */
export interface ReplyDelta {
  inReplyTo: string;
  delta: string;
  attempt: number;
}

/**
 * A reply's prompt left `trimmed` older messages out to fit the model's context window: it sent
 * `messages` messages, about `tokens` tokens (docs/replies-and-streams.md#context-that-fits-the-model).
 */
export interface ContextTrimmed {
  inReplyTo: string | null;
  messages: number;
  tokens: number;
  trimmed: number;
}

/** A reply that was given up (the provider kept failing). */
export interface ReplyFailed {
  inReplyTo: string;
  error: string;
}

/** A tool call the model decided, its streamed argument deltas assembled (`tool.call`). */
export interface ToolCallDecided {
  inReplyTo: string | null;
  toolCall: T.ToolCall;
}

/**
 * One event of a conversation's stream (docs/replies-and-streams.md): a stored `message` (with its
 * cursor `id`), a `message.delta` of a reply being written, a `reply.failed`, a `reply.cancelled`
 * (a reply was stopped; what it had written follows as a `message`), a `context.trimmed` (older
 * messages were left out of a reply's prompt), a `tool.call` the model decided, a `tool.result`
 * (the stored `tool` message, with its cursor `id` too), a `reply.requires_action` (a reply paused
 * for client tools or approvals; also on opening a stream while one waits), or
 * `conversation.completed` (the last one). Event types this client does not know yet are skipped.
 */
export type ConversationStreamEvent =
  | { type: 'message'; id: string; data: T.Message }
  | { type: 'message.delta'; data: ReplyDelta }
  | { type: 'reply.failed'; data: ReplyFailed }
  | { type: 'tool.call'; data: ToolCallDecided }
  | { type: 'tool.result'; id: string; data: T.Message }
  | { type: 'reply.requires_action'; data: T.ReplyRequiresAction }
  | { type: 'reply.cancelled'; data: T.ReplyCancelled }
  | { type: 'context.trimmed'; data: ContextTrimmed }
  | { type: 'conversation.completed'; data: T.Conversation };

/** Options of `conversations.stream`. */
export interface ConversationStreamOptions {
  /** Start after this message cursor (a `message` event's `id`); default: the latest 50 messages first. */
  after?: string;
  /** Ends the iteration (quietly, without an error) and closes the connection. */
  signal?: AbortSignal;
  /**
   * Reconnections tried in a row after the connection drops without any event received in between;
   * default 5. Each resumes after the last `message` or `tool.result` received (`Last-Event-ID`), so nothing is
   * missed and nothing comes twice. An error answer (401, 404, …) is thrown at once instead.
   */
  maxReconnects?: number;
  /** Wait before reconnecting, in ms; default the server's `retry:` field, else 1 000. */
  reconnectDelayMs?: number;
}

/** Opens the stream once: resolves with the body, or rejects (ParleyApiError, ParleyNetworkError, AbortError). */
export type OpenStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<ReadableStream<Uint8Array>>;

const KNOWN = new Set([
  'message',
  'message.delta',
  'reply.failed',
  'tool.call',
  'tool.result',
  'reply.requires_action',
  'reply.cancelled',
  'context.trimmed',
  'conversation.completed',
]);

function toEvent(message: EventSourceMessage): ConversationStreamEvent | undefined {
  if (!KNOWN.has(message.event ?? '')) return undefined;
  const data = JSON.parse(message.data) as never;
  return message.event === 'message' || message.event === 'tool.result'
    ? { type: message.event, id: message.id ?? '', data }
    : ({ type: message.event, data } as ConversationStreamEvent);
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * The events of a conversation's stream, in order, across reconnections, until
 * `conversation.completed` (yielded, then the iteration ends), `options.signal` aborts, or the
 * caller stops iterating (`break`), which closes the connection.
 * @throws ParleyApiError when the server answers an error (it is not retried); the last
 *   connection failure after `maxReconnects` reconnections without progress
 */
export async function* conversationStream(
  open: OpenStream,
  options: ConversationStreamOptions = {},
): AsyncGenerator<ConversationStreamEvent, void, undefined> {
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) return;
  options.signal?.addEventListener('abort', abort, { once: true });
  let lastEventId = options.after;
  let retryMs = options.reconnectDelayMs ?? 1_000;
  let failures = 0;
  try {
    for (;;) {
      try {
        const body = await open(lastEventId, controller.signal);
        const reader = body
          .pipeThrough(new TextDecoderStream())
          .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => (retryMs = options.reconnectDelayMs ?? ms) }))
          .getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            const event = toEvent(value);
            if (!event) continue;
            failures = 0;
            // Stored messages carry cursors: a reconnection resumes after the last one.
            if (event.type === 'message' || event.type === 'tool.result') lastEventId = event.id;
            yield event;
            if (event.type === 'conversation.completed') return;
          }
        } finally {
          await reader.cancel().catch(() => {});
        }
        // The server ended the stream before the conversation completed (a restart, a proxy's timeout).
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof ParleyApiError) throw error;
        if (++failures > (options.maxReconnects ?? 5)) throw error;
      }
      await wait(retryMs, controller.signal);
      if (controller.signal.aborted) return;
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    controller.abort();
  }
}
