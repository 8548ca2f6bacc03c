/**
 * @module Conversations on Redis: a HASH of records, a HASH of their owners (agent and user),
 * and sorted-set indexes per workspace, per status, per agent, per user, and per agent or
 * user × status.
 */
import { CONVERSATION_STATUSES, type Conversation, type ConversationFilter, type ConversationStatus, type ConversationStore, type OffsetPage, type PageResult } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys, type WorkspaceKeys } from '../keys.js';
import { CONVERSATION_INSERT, CONVERSATION_REPLACE, INTERSECTION_PAGE } from '../scripts/conversations.js';
import { PAGE } from '../scripts/records.js';
import { pageReply } from '../scripts/script.js';

/** What decides a conversation's indexes besides its status: its agent and user. */
export type ConversationOwner = Pick<Conversation, 'agentId' | 'userId'>;

/**
 * A conversation's owner as stored in the owner hash and compared by scripts: JSON, which is
 * injective and escapes lone surrogates, so ioredis sends it byte for byte.
 */
export function conversationOwner({ agentId, userId }: ConversationOwner): string {
  return JSON.stringify([agentId, userId]);
}

/** The owner a {@link conversationOwner} string stands for. */
export function parseOwner(owner: string): ConversationOwner {
  const [agentId, userId] = JSON.parse(owner) as [string, string | null];
  return { agentId, userId };
}

/** Every index a conversation with these fields belongs to. */
function indexesOf(keys: WorkspaceKeys, { agentId, userId, status }: Pick<Conversation, 'agentId' | 'userId' | 'status'>): string[] {
  const indexes = [keys.convs, keys.convsByStatus(status), keys.convsByAgent(agentId), keys.convsByAgent(agentId, status)];
  if (userId !== null) indexes.push(keys.convsByUser(userId), keys.convsByUser(userId, status));
  return indexes;
}

/** Every index but the all-conversations one that a conversation of this owner may be in. */
function leavableIndexes(keys: WorkspaceKeys, { agentId, userId }: ConversationOwner): string[] {
  const indexes = [keys.convsByAgent(agentId)];
  if (userId !== null) indexes.push(keys.convsByUser(userId));
  for (const status of CONVERSATION_STATUSES) {
    indexes.push(keys.convsByStatus(status), keys.convsByAgent(agentId, status));
    if (userId !== null) indexes.push(keys.convsByUser(userId, status));
  }
  return indexes;
}

/**
 * {@link ConversationStore} on Redis. Every method is one round trip in the usual case (a
 * command or one Lua script); `replace` takes a second one only when the caller changed the
 * conversation's agent or user, whose index keys it could not know in advance.
 *
 * List cost: with no filter, one filter, or `status` with `agentId` or `userId`, a page is
 * O(log n + limit) on a dedicated index and `total` is ZCARD. `agentId` together with `userId`
 * has no combined index: the smaller of the two indexes is walked and checked against the other,
 * O(min(conversations of the agent, conversations of the user)).
 */
export class RedisConversationStore implements ConversationStore {
  constructor(private readonly runner: RedisRunner) {}

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async insert(workspaceId: string, conversation: Conversation): Promise<boolean> {
    const keys = this.keys(workspaceId);
    const reply = await this.runner.script(
      CONVERSATION_INSERT,
      [keys.agent, keys.conv, keys.convOwner, ...indexesOf(keys, conversation)],
      [conversation.agentId, conversation.id, JSON.stringify(conversation), conversationOwner(conversation)],
    );
    return reply === 1;
  }

  async get(workspaceId: string, id: string): Promise<Conversation | null> {
    const raw = await this.runner.run((client) => client.hget(this.keys(workspaceId).conv, id));
    return raw === null ? null : (JSON.parse(raw) as Conversation);
  }

  async list(workspaceId: string, { offset, limit, agentId, userId, status }: OffsetPage & ConversationFilter): Promise<PageResult<Conversation>> {
    const keys = this.keys(workspaceId);
    if (agentId !== undefined && userId !== undefined) {
      const reply = await this.runner.script(
        INTERSECTION_PAGE,
        [keys.convsByAgent(agentId, status), keys.convsByUser(userId, status), keys.conv],
        [offset, limit],
      );
      return pageReply<Conversation>(reply);
    }
    const index =
      agentId !== undefined
        ? keys.convsByAgent(agentId, status)
        : userId !== undefined
          ? keys.convsByUser(userId, status)
          : status !== undefined
            ? keys.convsByStatus(status)
            : keys.convs;
    return pageReply<Conversation>(await this.runner.script(PAGE, [index, keys.conv], [offset, limit]));
  }

  async replace(workspaceId: string, conversation: Conversation, condition: { ifStatus?: ConversationStatus } = {}): Promise<boolean> {
    const keys = this.keys(workspaceId);
    // Assume the stored agent and user are the new ones (the port says "same agent"; the user
    // cannot change through the API). If not, the script hands back the stored owner and we
    // retry with its index keys; the script's owner check makes the retry race-free.
    const owner = conversationOwner(conversation);
    let stored = owner;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const leave = leavableIndexes(keys, parseOwner(stored));
      // The stored status is the status index the conversation is in (the leave list holds them all).
      const statusIndex = condition.ifStatus === undefined ? 0 : 3 + leave.indexOf(keys.convsByStatus(condition.ifStatus));
      const reply = await this.runner.script(
        CONVERSATION_REPLACE,
        [keys.conv, keys.convOwner, ...leave, ...indexesOf(keys, conversation)],
        [conversation.id, JSON.stringify(conversation), leave.length, stored, owner, statusIndex],
      );
      if (typeof reply !== 'string') return reply === 1;
      stored = reply;
    }
    throw new Error(`Conversation '${conversation.id}' kept changing its agent or user during replace.`);
  }
}
