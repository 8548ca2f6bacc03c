/**
 * @module Messages in memory: per conversation an id-sorted array, so a history page is a binary
 * search (O(log n + limit)); an append moves its conversation's timestamps and usage counters.
 */
import {
  frozenCopy,
  recordVersion,
  usageDay,
  usageIncrements,
  type MessagePage,
  type MessageStore,
} from '@parley/core/adapter';
import { versioned } from '../memory-changes.js';
import { lowerBound } from '../sorted.js';
import type { StoreContext } from './context.js';

/** `storage.messages` in memory. */
export function messageStore({ workspaceOf, log }: StoreContext): MessageStore {
  return {
    append: async (scope, message, { event, usage }) => {
      const { workspaceId } = scope;
      const workspace = workspaceOf(workspaceId);
      const conversation = workspace.conversations.get(message.conversationId);
      if (!conversation) return 'conversation_not_found';
      if (conversation.status !== 'active') return 'conversation_completed';
      let history = workspace.messages.get(message.conversationId);
      if (!history) workspace.messages.set(message.conversationId, (history = []));
      // Ids normally arrive in order (append at the end); a late one is placed by binary search.
      const stored = frozenCopy(message);
      const last = history[history.length - 1];
      if (last === undefined || last.id < stored.id) history.push(stored);
      else history.splice(lowerBound(history, stored.id), 0, stored);
      // Never backwards: a late-arriving older message leaves both where they are (ports/storage.ts).
      const at = message.createdAt;
      // `conversation` is a stored, deep-frozen record: its insides are shared, not copied.
      workspace.conversations.set(
        versioned(
          {
            ...conversation,
            lastMessageAt:
              conversation.lastMessageAt === null || at > conversation.lastMessageAt ? at : conversation.lastMessageAt,
            updatedAt: at > conversation.updatedAt ? at : conversation.updatedAt,
          },
          recordVersion(conversation) + 1,
        ),
      );
      log.record(scope, event, message, stored);
      if (usage) {
        const day = usageDay(message.createdAt);
        let counters = workspace.usage.get(day);
        if (!counters) workspace.usage.set(day, (counters = {}));
        for (const [field, increment] of usageIncrements(usage)) counters[field] = (counters[field] ?? 0) + increment;
      }
      return 'appended';
    },
    get: async ({ workspaceId }, conversationId, id) => {
      const history = workspaceOf(workspaceId).messages.get(conversationId) ?? [];
      const message = history[lowerBound(history, id)];
      return message?.id === id ? message : null;
    },
    page: async (
      { workspaceId },
      conversationId,
      { before, after, limit, requireConversation },
    ): Promise<MessagePage | null> => {
      if (requireConversation && !workspaceOf(workspaceId).conversations.has(conversationId)) return null;
      const history = workspaceOf(workspaceId).messages.get(conversationId) ?? [];
      if (after !== undefined) {
        const at = lowerBound(history, after);
        if (history[at]?.id !== after) return null;
        const end = Math.min(history.length, at + 1 + limit);
        return { messages: history.slice(at + 1, end), hasMore: end < history.length };
      }
      let end = history.length;
      if (before !== undefined) {
        end = lowerBound(history, before);
        if (history[end]?.id !== before) return null;
      }
      const start = Math.max(0, end - limit);
      return { messages: history.slice(start, end), hasMore: start > 0 };
    },
  };
}
