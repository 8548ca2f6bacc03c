/**
 * @module The in-process storage adapter.
 *
 * Guarantees: everything lives in this process's memory and is gone when it exits; each method
 * runs synchronously inside one event-loop turn, so every operation is atomic with respect to
 * the others. Records are cloned on the way in and out. Lists sort the workspace's records
 * (O(n log n)); history pages are a binary search over the conversation's id-sorted array
 * (O(log n + limit)).
 */
import type {
  Agent,
  AgentStore,
  Conversation,
  ConversationStore,
  Message,
  MessagePage,
  MessageStore,
  OffsetPage,
  PageResult,
  Plant,
  PlantStore,
  Storage,
  WebhookEndpointRecord,
  WebhookEndpointStore,
} from '@parley/core';
import { lowerBound } from './sorted.js';

interface Workspace {
  agents: Map<string, Agent>;
  conversations: Map<string, Conversation>;
  /** Per conversation, sorted by id ascending. */
  messages: Map<string, Message[]>;
  webhookEndpoints: Map<string, WebhookEndpointRecord>;
  plants: Map<number, Plant>;
  plantsSeeded: boolean;
}

function newestFirst<T extends { id: string }>(records: Iterable<T>, keep: (record: T) => boolean, page: OffsetPage): PageResult<T> {
  const matching = [...records].filter(keep).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { items: matching.slice(page.offset, page.offset + page.limit).map((record) => structuredClone(record)), total: matching.length };
}

const copy = <T>(value: T | undefined): T | null => (value === undefined ? null : structuredClone(value));

/** {@link Storage} in this process's memory: for tests, development and single-process servers. */
export class MemoryStorage implements Storage {
  private readonly workspaces = new Map<string, Workspace>();

  private workspace(id: string): Workspace {
    let workspace = this.workspaces.get(id);
    if (!workspace) {
      workspace = { agents: new Map(), conversations: new Map(), messages: new Map(), webhookEndpoints: new Map(), plants: new Map(), plantsSeeded: false };
      this.workspaces.set(id, workspace);
    }
    return workspace;
  }

  readonly agents: AgentStore = {
    insert: async (workspaceId, agent) => {
      this.workspace(workspaceId).agents.set(agent.id, structuredClone(agent));
    },
    get: async (workspaceId, id) => copy(this.workspace(workspaceId).agents.get(id)),
    list: async (workspaceId, { status, ...page }) =>
      newestFirst(this.workspace(workspaceId).agents.values(), (agent) => status === undefined || agent.status === status, page),
    replace: async (workspaceId, agent) => {
      const { agents } = this.workspace(workspaceId);
      if (!agents.has(agent.id)) return false;
      agents.set(agent.id, structuredClone(agent));
      return true;
    },
    delete: async (workspaceId, id) => {
      const workspace = this.workspace(workspaceId);
      const agent = workspace.agents.get(id);
      if (!agent) return null;
      workspace.agents.delete(id);
      for (const conversation of workspace.conversations.values()) {
        if (conversation.agentId !== id) continue;
        workspace.conversations.delete(conversation.id);
        workspace.messages.delete(conversation.id);
      }
      return agent;
    },
  };

  readonly conversations: ConversationStore = {
    insert: async (workspaceId, conversation) => {
      const workspace = this.workspace(workspaceId);
      if (!workspace.agents.has(conversation.agentId)) return false;
      workspace.conversations.set(conversation.id, structuredClone(conversation));
      return true;
    },
    get: async (workspaceId, id) => copy(this.workspace(workspaceId).conversations.get(id)),
    list: async (workspaceId, { agentId, userId, status, ...page }) => {
      const matches = (conversation: Conversation) =>
        (agentId === undefined || conversation.agentId === agentId) &&
        (userId === undefined || conversation.userId === userId) &&
        (status === undefined || conversation.status === status);
      return newestFirst(this.workspace(workspaceId).conversations.values(), matches, page);
    },
    replace: async (workspaceId, conversation, condition = {}) => {
      const { conversations } = this.workspace(workspaceId);
      const stored = conversations.get(conversation.id);
      if (!stored || (condition.ifStatus !== undefined && stored.status !== condition.ifStatus)) return false;
      conversations.set(conversation.id, structuredClone(conversation));
      return true;
    },
  };

  readonly messages: MessageStore = {
    append: async (workspaceId, message) => {
      const workspace = this.workspace(workspaceId);
      if (!workspace.conversations.has(message.conversationId)) return false;
      let history = workspace.messages.get(message.conversationId);
      if (!history) workspace.messages.set(message.conversationId, (history = []));
      // Ids normally arrive in order (append at the end); a late one is placed by binary search.
      history.splice(lowerBound(history, message.id), 0, structuredClone(message));
      return true;
    },
    page: async (workspaceId, conversationId, { before, limit }): Promise<MessagePage | null> => {
      const history = this.workspace(workspaceId).messages.get(conversationId) ?? [];
      let end = history.length;
      if (before !== undefined) {
        end = lowerBound(history, before);
        if (history[end]?.id !== before) return null;
      }
      const start = Math.max(0, end - limit);
      return { messages: history.slice(start, end).map((message) => structuredClone(message)), hasMore: start > 0 };
    },
  };

  readonly webhookEndpoints: WebhookEndpointStore = {
    insert: async (workspaceId, endpoint) => {
      this.workspace(workspaceId).webhookEndpoints.set(endpoint.id, structuredClone(endpoint));
    },
    get: async (workspaceId, id) => copy(this.workspace(workspaceId).webhookEndpoints.get(id)),
    list: async (workspaceId, page) => newestFirst(this.workspace(workspaceId).webhookEndpoints.values(), () => true, page),
    replace: async (workspaceId, endpoint) => {
      const { webhookEndpoints } = this.workspace(workspaceId);
      if (!webhookEndpoints.has(endpoint.id)) return false;
      webhookEndpoints.set(endpoint.id, structuredClone(endpoint));
      return true;
    },
    delete: async (workspaceId, id) => this.workspace(workspaceId).webhookEndpoints.delete(id),
  };

  readonly plants: PlantStore = {
    seed: async (workspaceId, plants) => {
      const workspace = this.workspace(workspaceId);
      if (workspace.plantsSeeded) return;
      workspace.plantsSeeded = true;
      for (const plant of plants) workspace.plants.set(plant.id, structuredClone(plant));
    },
    list: async (workspaceId, limit) => {
      const plants = [...this.workspace(workspaceId).plants.values()].sort((a, b) => a.id - b.id);
      return plants.slice(0, limit ?? plants.length).map((plant) => structuredClone(plant));
    },
    insert: async (workspaceId, plant) => {
      const { plants } = this.workspace(workspaceId);
      if (plants.has(plant.id)) return false;
      plants.set(plant.id, structuredClone(plant));
      return true;
    },
    delete: async (workspaceId, id) => this.workspace(workspaceId).plants.delete(id),
  };

  async ping(): Promise<void> {}
}

