/**
 * @module Conversations on Redis: a HASH of records, a HASH of their owners (agent and user),
 * and sorted-set indexes per workspace, per status, per agent, per user, and per agent or
 * user × status.
 */
import { CONVERSATION_STATUSES, ErrorCode, ParleyError, type Conversation, type ConversationFilter, type ConversationStore, type DomainEvent, type OffsetPage, type PageResult, type Update } from '@parley/core';
import { workspaceKeys, type WorkspaceKeys } from '../keys.js';
import { strings } from '../script.js';
import { conversationPageReply, mergeActivity, type StoredConversation } from './conversation-activity.js';
import { CONVERSATION_DELETE, CONVERSATION_GET, CONVERSATION_INSERT, CONVERSATION_PAGE, CONVERSATION_UPDATE, INTERSECTION_PAGE } from './conversation-store.lua.js';
import type { EventLog } from './event-log.js';
import { compareAndSet, UPDATE_ATTEMPTS, type CasOutcome } from './update.js';

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
 * {@link ConversationStore} on Redis. `insert` is one script that checks the agent is active and
 * records `conversation.started` with the conversation; `update` reads the record, then writes
 * with a compare-and-set script (see update.ts) that knows the stored owner's index keys from
 * the record it read.
 *
 * List cost: with no filter, one filter, or `status` with `agentId` or `userId`, a page is
 * O(log n + limit) on a dedicated index and `total` is ZCARD. `agentId` together with `userId`
 * has no combined index: the smaller of the two indexes is walked and checked against the other,
 * O(min(conversations of the agent, conversations of the user)).
 */
export class RedisConversationStore implements ConversationStore {
  constructor(private readonly log: EventLog) {}

  private get runner() {
    return this.log.runner;
  }

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async insert(workspaceId: string, conversation: Conversation, event: DomainEvent): Promise<'inserted' | 'agent_not_found' | 'agent_inactive'> {
    const keys = this.keys(workspaceId);
    const recording = this.log.params(workspaceId, keys, event);
    return this.log.write(
      workspaceId,
      async () =>
        (await this.runner.script(CONVERSATION_INSERT, {
          keys: {
            agent: keys.agent,
            activeAgents: keys.agentsByStatus('active'),
            conv: keys.conv,
            convOwner: keys.convOwner,
            indexes: indexesOf(keys, conversation),
            ...recording.keys,
          },
          args: { agentId: conversation.agentId, id: conversation.id, json: JSON.stringify(conversation), owner: conversationOwner(conversation), ...recording.args },
        })) as 'inserted' | 'agent_not_found' | 'agent_inactive',
      (outcome) => outcome === 'inserted',
    );
  }

  private async read(workspaceId: string, id: string): Promise<StoredConversation | null> {
    const keys = this.keys(workspaceId);
    const [json, activity] = strings(await this.runner.script(CONVERSATION_GET, { keys: { conv: keys.conv, convActivity: keys.convActivity }, args: { id } }));
    return json === undefined ? null : { json, activity: activity ?? '' };
  }

  /** One script: the record and its activity are read in the same step. */
  async get(workspaceId: string, id: string): Promise<Conversation | null> {
    const stored = await this.read(workspaceId, id);
    return stored === null ? null : mergeActivity(stored);
  }

  async list(workspaceId: string, { offset, limit, agentId, userId, status }: OffsetPage & ConversationFilter): Promise<PageResult<Conversation>> {
    const keys = this.keys(workspaceId);
    if (agentId !== undefined && userId !== undefined) {
      const reply = await this.runner.script(INTERSECTION_PAGE, {
        keys: { indexA: keys.convsByAgent(agentId, status), indexB: keys.convsByUser(userId, status), conv: keys.conv, convActivity: keys.convActivity },
        args: { offset, limit },
      });
      return conversationPageReply(reply);
    }
    const index =
      agentId !== undefined
        ? keys.convsByAgent(agentId, status)
        : userId !== undefined
          ? keys.convsByUser(userId, status)
          : status !== undefined
            ? keys.convsByStatus(status)
            : keys.convs;
    return conversationPageReply(await this.runner.script(CONVERSATION_PAGE, { keys: { index, conv: keys.conv, convActivity: keys.convActivity }, args: { offset, limit } }));
  }

  /**
   * Compare-and-set on the stored JSON (see update.ts): the indexes left are those of the record
   * read, and the script writes only if it is still stored, so a change of agent or user (which
   * the API never makes) moves the conversation between the right indexes too.
   */
  async update(workspaceId: string, id: string, update: Update<Conversation>): Promise<Conversation | null> {
    const keys = this.keys(workspaceId);
    await this.log.register(workspaceId);
    return compareAndSet<Conversation, StoredConversation>(
      () => this.read(workspaceId, id),
      update,
      async (current, { record, event }, stored) => {
        const recording = this.log.params(workspaceId, keys, event);
        const outcome = (await this.runner.script(CONVERSATION_UPDATE, {
          keys: {
            conv: keys.conv,
            convOwner: keys.convOwner,
            convActivity: keys.convActivity,
            leave: leavableIndexes(keys, current),
            join: indexesOf(keys, record),
            ...recording.keys,
          },
          args: { id, expected: stored.json, expectedActivity: stored.activity, json: JSON.stringify(record), owner: conversationOwner(record), ...recording.args },
        })) as CasOutcome;
        if (outcome === 'ok' && event) void this.log.hint(workspaceId);
        return outcome;
      },
      mergeActivity,
    );
  }

  /**
   * Reads the stored owner (which decides the index keys), then deletes in one script that
   * writes only while that owner is still stored; retried like an update when it changed.
   */
  /**
   * Compare-and-set like `update`: the script deletes only while the owner — and, with `check`,
   * the record and its activity — are still the ones read.
   */
  async delete(workspaceId: string, id: string, check?: (current: Conversation) => void, event?: (deleted: Conversation) => DomainEvent): Promise<boolean> {
    const keys = this.keys(workspaceId);
    if (event) await this.log.register(workspaceId);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
      const [owner, stored] = await Promise.all([this.runner.run((client) => client.hget(keys.convOwner, id)), check || event ? this.read(workspaceId, id) : null]);
      if (owner === null) return false;
      const current = stored && mergeActivity(stored);
      if (check && current) check(current);
      const recorded = event && current ? event(current) : undefined;
      const recording = this.log.params(workspaceId, keys, recorded);
      const outcome = (await this.runner.script(CONVERSATION_DELETE, {
        keys: {
          conv: keys.conv,
          convOwner: keys.convOwner,
          convActivity: keys.convActivity,
          indexes: [keys.convs, ...leavableIndexes(keys, parseOwner(owner))],
          msg: keys.msg(id),
          msgs: keys.msgs(id),
          ...recording.keys,
        },
        args: { id, owner, expectedJson: stored?.json ?? '', expectedActivity: stored?.activity ?? '', checked: stored ? '1' : '0', ...recording.args },
      })) as CasOutcome;
      if (outcome === 'ok' && recorded) void this.log.hint(workspaceId);
      if (outcome !== 'changed') return outcome === 'ok';
    }
    throw new ParleyError(ErrorCode.serviceUnavailable, 'The conversation kept changing during the delete; try again.');
  }
}
