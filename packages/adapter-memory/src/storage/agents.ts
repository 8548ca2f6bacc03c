/** @module Agents in memory: a deleted agent takes its conversations and their messages with it. */
import { frozenCopy, type AgentStore } from '@parley/core/adapter';
import { applyChange, meets, versioned } from '../memory-changes.js';
import { eventOf, found, type StoreContext } from './context.js';

/** `storage.agents` in memory. */
export function agentStore({ workspaceOf, log }: StoreContext): AgentStore {
  return {
    insert: async (scope, agent, { event }) => {
      const { workspaceId } = scope;
      const stored = versioned(frozenCopy(agent), 1);
      workspaceOf(workspaceId).agents.set(stored);
      log.record(scope, event, agent, stored);
    },
    get: async ({ workspaceId }, id) => found(workspaceOf(workspaceId).agents.get(id)),
    list: async ({ workspaceId }, { status, ...page }) =>
      workspaceOf(workspaceId).agents.newestFirst(
        page,
        status === undefined ? undefined : (agent) => agent.status === status,
      ),
    update: async (scope, id, change) => {
      const { workspaceId } = scope;
      const result = applyChange(workspaceOf(workspaceId).agents, id, change);
      if (result?.outcome === 'applied' && change.event) log.record(scope, eventOf(change.event, result.record));
      return result;
    },
    delete: async (scope, id, options) => {
      const { workspaceId } = scope;
      const workspace = workspaceOf(workspaceId);
      const agent = workspace.agents.get(id);
      if (!agent) return null;
      if (!meets(agent, options)) return { outcome: 'unmet', record: agent };
      workspace.agents.delete(id);
      for (const conversation of workspace.conversations.deleteWhere((conversation) => conversation.agentId === id)) {
        workspace.messages.delete(conversation.id);
      }
      log.record(scope, eventOf(options.event, agent));
      return { outcome: 'applied', record: agent };
    },
  };
}
