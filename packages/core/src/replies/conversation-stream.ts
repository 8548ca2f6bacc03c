/**
 * @module A conversation's live stream (README "Live streams"): stored messages after a cursor, then
 * live ones, deltas of replies being generated, and the end when the conversation completes.
 */
import { ParleyError } from '../errors.js';
import type { ConversationFeed, FeedSignal, FeedSubscription } from '../ports/conversation-feed.js';
import type { Storage } from '../ports/storage.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../services/cursor.js';
import { conversationView } from '../services/conversation-view.js';
import type { Conversation, Message, ReplyCancelled, ReplyContext, ReplyRequiresAction, ToolCall } from '../types.js';
import type { SharedPageReads } from './shared-page-reads.js';
import type { WorkspaceScope } from '../ports/scope.js';

/**
 * What a stream yields, in order. `message` carries `cursor` (the SSE `id:`: pass it back as
 * `Last-Event-ID` or `?after=` to resume after this message); a `tool` message (a tool's result) comes
 * as `tool.result`, with a cursor too. `idle` is yielded when nothing
 * happened for `idleMs` (the transport's keep-alive moment). After `conversation.completed`
 * the stream ends.
 */
export type StreamItem =
  | { type: 'message'; cursor: string; message: Message }
  | { type: 'tool.result'; cursor: string; message: Message }
  | { type: 'tool.call'; data: { inReplyTo: string | null; toolCall: ToolCall } }
  | { type: 'reply.requires_action'; data: ReplyRequiresAction }
  | { type: 'message.delta'; data: { inReplyTo: string | null; delta: string; attempt: number } }
  | { type: 'reply.failed'; data: { inReplyTo: string | null; error: string } }
  | { type: 'reply.cancelled'; data: ReplyCancelled }
  | { type: 'context.trimmed'; data: { inReplyTo: string | null } & ReplyContext }
  | { type: 'conversation.completed'; conversation: Conversation }
  | { type: 'idle' };

/** An open stream: iterate it once; `close()` (idempotent) ends it and releases its subscription and timer. */
export interface ConversationStream extends AsyncIterable<StreamItem> {
  close(): Promise<void>;
}

/** Options of {@link openConversationStream}. */
export interface ConversationStreamOptions {
  /** A cursor of this conversation (`Last-Event-ID` / `after`): start after that message. */
  after?: string;
  /** Without `after`: how many of the latest messages to send first (default 50, like a history page). */
  replay?: number;
  /** Quiet time after which `idle` is yielded and storage is checked again, in ms (default 15 000). */
  idleMs?: number;
}

/** How many messages one storage read fetches while catching up. */
const PAGE = 100;
/** How many sent ids back each read on starts (see `recent`), and how many sent ids are remembered. */
const LOOKBACK = 20;
const RECENT = 200;

/**
 * Opens the live stream of a conversation. It subscribes to the conversation's feed first, then
 * reads history: every message stored after the cursor (or the latest `replay` ones) is sent from
 * storage, oldest first, and each later `message` signal makes it read on from the last message it
 * sent — so a message is sent once, in id order, whether its signal came, came twice or was lost
 * (storage is checked again every `idleMs` too). Deltas and failures are passed on as they come.
 * Streams given the same `reads` share identical history reads in flight (shared-page-reads.ts).
 * @throws ParleyError `not_found` (no such conversation in the workspace); `invalid_request` (a
 *   cursor that is not one of this conversation's messages)
 */
export async function openConversationStream(
  deps: { storage: Storage; feed: ConversationFeed; reads: SharedPageReads },
  scope: WorkspaceScope,
  conversationId: string,
  options: ConversationStreamOptions = {},
): Promise<ConversationStream> {
  const { storage, feed, reads } = deps;
  if (!(await storage.conversations.get(scope, conversationId)))
    throw ParleyError.notFound('conversation', conversationId);
  let lastId = options.after === undefined ? undefined : decodeCursor(conversationId, options.after);
  if (
    lastId !== undefined &&
    (await storage.messages.page(scope, conversationId, { after: lastId, limit: 1 })) === null
  )
    throw invalidCursor();

  const pending: FeedSignal[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  /** History reads shared with other streams must have started after this (see `SharedPageReads`). */
  let mark = 0;
  const subscription: FeedSubscription = await feed.subscribe(scope, conversationId, (signal) => {
    mark = reads.mark();
    pending.push(signal);
    wake?.();
  });
  mark = reads.mark();
  const close = async () => {
    if (closed) return;
    closed = true;
    wake?.();
    await subscription.unsubscribe();
  };

  /**
   * Ids sent lately, ascending. Reading on starts {@link LOOKBACK} ids back from the newest sent, so
   * a message committed a moment after a newer one (ids are made before the write, so two writes
   * racing can commit out of id order) is still sent, once: ids already sent are skipped.
   */
  const recent: string[] = lastId === undefined ? [] : [lastId];
  const recentSet = new Set(recent);

  /** Messages stored after the last one sent (the latest `replay` on a stream opened without a cursor). */
  async function* catchUp(): AsyncGenerator<StreamItem> {
    if (lastId === undefined) {
      const latest = await reads.page(scope, conversationId, { limit: options.replay ?? 50 }, mark);
      for (const message of latest?.messages ?? []) yield sent(message);
      if (lastId === undefined) return;
    }
    let from = recent[Math.max(0, recent.length - 1 - LOOKBACK)] ?? lastId;
    for (;;) {
      const page = await reads.page(scope, conversationId, { after: from, limit: PAGE }, mark);
      // The message read from was deleted with its conversation: nothing more will come.
      if (!page) return;
      for (const message of page.messages) if (!recentSet.has(message.id)) yield sent(message);
      const newest = page.messages.at(-1);
      if (!page.hasMore || !newest) return;
      from = newest.id;
    }
  }

  /**
   * Records `message` as sent. Its event's cursor is the newest id sent so far (not always its
   * own): a client resuming from it gets exactly what it has not seen.
   */
  function sent(message: Message): StreamItem {
    const at = recent.findLastIndex((id) => id < message.id) + 1;
    recent.splice(at, 0, message.id);
    recentSet.add(message.id);
    if (recent.length > RECENT) recentSet.delete(recent.shift()!);
    if (lastId === undefined || message.id > lastId) lastId = message.id;
    return {
      type: message.role === 'tool' ? 'tool.result' : 'message',
      cursor: encodeCursor(conversationId, lastId),
      message,
    };
  }

  /** Waits for a signal, `close()` or `idleMs`; true when it timed out. */
  function waitForSignal(): Promise<boolean> {
    if (pending.length > 0 || closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(true), options.idleMs ?? 15_000);
      wake = () => done(false);
      function done(idle: boolean) {
        clearTimeout(timer);
        wake = undefined;
        resolve(idle);
      }
    });
  }

  /** Ends the stream (`true`) when the conversation, as read now or as `given`, is completed or gone. */
  async function* completedIfSo(given?: Conversation | null): AsyncGenerator<StreamItem, boolean> {
    const current = given === undefined ? await storage.conversations.get(scope, conversationId) : given;
    if (current && current.status === 'active') return false;
    yield* catchUp();
    if (current) yield { type: 'conversation.completed', conversation: conversationView(current) };
    return true;
  }

  /**
   * A reply that paused before this stream subscribed: its `reply.requires_action` would never
   * come as a signal, so it is sent from the conversation's `pendingToolCalls` (read after
   * subscribing: a pause in between may then come twice, never not at all). `inReplyTo` comes from
   * the stored step that asked for the calls, found among the latest messages.
   */
  async function* pausedBeforeOpen(current: Conversation): AsyncGenerator<StreamItem> {
    const toolCalls = current.pendingToolCalls;
    if (toolCalls.length === 0) return;
    const latest = await storage.messages.page(scope, conversationId, { limit: PAGE });
    const step = latest?.messages.findLast((message) =>
      message.toolCalls?.some((call) => call.id === toolCalls[0]!.id),
    );
    const reply = step?.metadata.reply as { inReplyTo?: unknown } | undefined;
    const inReplyTo = typeof reply?.inReplyTo === 'string' ? reply.inReplyTo : null;
    yield { type: 'reply.requires_action', data: { conversationId, inReplyTo, toolCalls } };
  }

  async function* run(): AsyncGenerator<StreamItem> {
    try {
      yield* catchUp();
      // Read once after the catch-up: it ends a completed stream, or tells of a paused reply.
      const current = await storage.conversations.get(scope, conversationId);
      if (yield* completedIfSo(current)) return;
      yield* pausedBeforeOpen(current!);
      while (!closed) {
        const idle = await waitForSignal();
        if (closed) return;
        if (idle) {
          mark = reads.mark();
          yield* catchUp();
          if (yield* completedIfSo()) return;
          yield { type: 'idle' };
          continue;
        }
        const signals = pending.splice(0);
        for (const signal of signals) {
          if (signal.type === 'message.delta')
            yield {
              type: 'message.delta',
              data: { inReplyTo: signal.inReplyTo, delta: signal.delta, attempt: signal.attempt },
            };
          else if (signal.type === 'reply.failed')
            yield { type: 'reply.failed', data: { inReplyTo: signal.inReplyTo, error: signal.error } };
          else if (signal.type === 'reply.cancelled') yield { type: 'reply.cancelled', data: signal.data };
          else if (signal.type === 'context.trimmed')
            yield { type: 'context.trimmed', data: { inReplyTo: signal.inReplyTo, ...signal.context } };
          else if (signal.type === 'tool.call')
            yield { type: 'tool.call', data: { inReplyTo: signal.inReplyTo, toolCall: signal.toolCall } };
          else if (signal.type === 'reply.requires_action') {
            // Messages stored before the pause (the step asking for the calls) come first.
            yield* catchUp();
            yield { type: 'reply.requires_action', data: signal.data };
          } else if (signal.type === 'message') yield* catchUp();
          else if (yield* completedIfSo()) return;
        }
      }
    } finally {
      await close();
    }
  }

  const iterator = run();
  return { [Symbol.asyncIterator]: () => iterator, close };
}
