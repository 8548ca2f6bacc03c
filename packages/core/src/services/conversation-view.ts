/** @module What the API shows of a stored conversation: the tool calls a paused reply still waits for, without the answers given. */
import type { Conversation } from '../types.js';

/**
 * `conversation` as the API shows it: `pendingToolCalls` lists only the calls not answered yet,
 * without the answers kept for the reply's resumption (docs/replies-and-streams.md#tools), and is
 * `[]` on a record stored before tools existed. Returns `conversation` itself when nothing changes.
 */
export function conversationView(conversation: Conversation): Conversation {
  const pending = conversation.pendingToolCalls as Array<Conversation['pendingToolCalls'][number] & { answer?: unknown }> | undefined;
  if (pending === undefined) return { ...conversation, pendingToolCalls: [] };
  if (!pending.some((call) => call.answer !== undefined)) return conversation;
  return { ...conversation, pendingToolCalls: pending.filter((call) => call.answer === undefined) };
}
