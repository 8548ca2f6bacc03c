/** @module The conversation feed port: live signals of a conversation, for its streams (README "Live streams"). */
import type { ReplyCancelled, ReplyContext, ReplyRequiresAction, ToolCall } from '../types.js';
import type { WorkspaceScope } from './scope.js';

/**
 * What a conversation's stream is told, live:
 * - `message`: a message was stored (`messageId`). A hint only: streams read the message from
 *   storage, after the last one they sent, so a hint lost or doubled never loses or doubles a message.
 * - `message.delta`: text of a reply being generated, in order; `attempt` (1–3) restarts the text
 *   when a failed try is tried again.
 * - `reply.failed`: a reply was given up (`error` says why, never message content).
 * - `tool.call`: the model decided a tool call (its streamed argument deltas assembled).
 * - `reply.requires_action`: a reply paused for client tools or approvals (docs/replies-and-streams.md#tools).
 * - `reply.cancelled`: a reply was stopped (docs/replies-and-streams.md#stopping-a-reply).
 * - `context.trimmed`: a reply step's prompt left older messages out to fit the model's context
 *   window (docs/replies-and-streams.md#context-that-fits-the-model).
 * - `conversation.completed`: the conversation was completed (also a hint: streams check storage).
 */
export type FeedSignal =
  | { type: 'message'; messageId: string }
  | { type: 'message.delta'; inReplyTo: string | null; delta: string; attempt: number }
  | { type: 'reply.failed'; inReplyTo: string | null; error: string }
  | { type: 'tool.call'; inReplyTo: string | null; toolCall: ToolCall }
  | { type: 'reply.requires_action'; data: ReplyRequiresAction }
  | { type: 'reply.cancelled'; data: ReplyCancelled }
  | { type: 'context.trimmed'; inReplyTo: string | null; context: ReplyContext }
  | { type: 'conversation.completed' };

/** A live subscription; `unsubscribe` releases everything it holds (idempotent). */
export interface FeedSubscription {
  unsubscribe(): Promise<void>;
}

/**
 * Signals of each conversation, from whoever produced them (the API instance that stored a
 * message, the worker generating a reply) to every stream of that conversation, on every instance
 * sharing the backend (Redis pub/sub; one process in memory). Best effort, at-most-once: a signal
 * published while nobody listens is gone, which is why streams re-read storage.
 */
export interface ConversationFeed {
  /** Sends `signal` to the conversation's current subscribers. Resolves once handed to the backend. */
  publish(scope: WorkspaceScope, conversationId: string, signal: FeedSignal): Promise<void>;
  /**
   * Calls `listener` with each signal of the conversation published from now on. Resolves once the
   * subscription is live: a signal published after that reaches it (what lets a stream subscribe,
   * then read history, and miss nothing in between).
   */
  subscribe(
    scope: WorkspaceScope,
    conversationId: string,
    listener: (signal: FeedSignal) => void,
  ): Promise<FeedSubscription>;
}
