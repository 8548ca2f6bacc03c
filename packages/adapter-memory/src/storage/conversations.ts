/** @module Conversations in memory: an insert checks its agent is there and active in the same turn. */
import type { Conversation } from '@parley/core';
import { frozenCopy, type ConversationStore } from '@parley/core/adapter';
import { applyChange, meets, versioned } from '../memory-changes.js';
import { eventOf, found, type StoreContext } from './context.js';

/** `storage.conversations` in memory. */
export function conversationStore({ workspaceOf, log }: StoreContext): ConversationStore {
  return {
    insert: async (scope, conversation, { event }) => {
      const { workspaceId } = scope;
      const workspace = workspaceOf(workspaceId);
      const agent = workspace.agents.get(conversation.agentId);
      if (!agent) return 'agent_not_found';
      if (agent.status !== 'active') return 'agent_inactive';
      const stored = versioned(frozenCopy(conversation), 1);
      workspace.conversations.set(stored);
      log.record(scope, event, conversation, stored);
      return 'inserted';
    },
    get: async ({ workspaceId }, id) => found(workspaceOf(workspaceId).conversations.get(id)),
    list: async ({ workspaceId }, { agentId, userId, status, ...page }) => {
      const filtered = agentId !== undefined || userId !== undefined || status !== undefined;
      const matches = (conversation: Conversation) =>
        (agentId === undefined || conversation.agentId === agentId) &&
        (userId === undefined || conversation.userId === userId) &&
        (status === undefined || conversation.status === status);
      return workspaceOf(workspaceId).conversations.newestFirst(page, filtered ? matches : undefined);
    },
    update: async (scope, id, change) => {
      const { workspaceId } = scope;
      const result = applyChange(workspaceOf(workspaceId).conversations, id, change);
      if (result?.outcome === 'applied' && change.event) log.record(scope, eventOf(change.event, result.record));
      return result;
    },
    delete: async (scope, id, options = {}) => {
      const { workspaceId } = scope;
      const workspace = workspaceOf(workspaceId);
      const stored = workspace.conversations.get(id);
      if (!stored) return null;
      if (!meets(stored, options)) return { outcome: 'unmet', record: stored };
      workspace.conversations.delete(id);
      workspace.messages.delete(id);
      if (options.event) log.record(scope, eventOf(options.event, stored));
      return { outcome: 'applied', record: stored };
    },
  };
}
