/**
 * @module Conversations on Redis: a HASH of records, a HASH of their owners (agent and user),
 * and sorted-set indexes per workspace, per status, per agent, per user, and per agent or
 * user × status.
 */
import {
  CONVERSATION_STATUSES,
  type Admission,
  type Change,
  type Conversation,
  type ConversationFilter,
  type ConversationStore,
  type DeleteConditions,
  type DomainEvent,
  type EventDraft,
  type OffsetPage,
  type PageResult,
  type WriteResult,
} from '@parley/core';
import { workspaceKeys, type WorkspaceKeys } from '../keys.js';
import { CONVERSATION_DELETE, CONVERSATION_INSERT, INTERSECTION_PAGE } from './conversation-store.lua.js';
import type { EventLog } from './event-log.js';
import { changeArgs, conditionArgs, decodeRecord, encodeRecord } from './record-format.js';
import { pageOf, writeResult } from './record-replies.js';
import { PAGE, RECORD_UPDATE } from './records.lua.js';

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
 * records `conversation.started` with the conversation; `update` is one script that merges the
 * change (records.lua.ts), after reading the conversation's owner when the change moves it between
 * status indexes (an owner never changes, so that read cannot go stale); `delete` likewise.
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

  async insert(workspaceId: string, conversation: Conversation, event: DomainEvent, admission?: Admission): Promise<'inserted' | 'agent_not_found' | 'agent_inactive'> {
    const keys = this.keys(workspaceId);
    const reply = await this.log.write(
      CONVERSATION_INSERT,
      workspaceId,
      {
        keys: { agent: keys.agent, activeAgents: keys.agentsByStatus('active'), conv: keys.conv, convOwner: keys.convOwner, indexes: indexesOf(keys, conversation) },
        args: { agentId: conversation.agentId, id: conversation.id, stored: encodeRecord(conversation), owner: conversationOwner(conversation) },
      },
      event,
      admission,
    );
    return reply as 'inserted' | 'agent_not_found' | 'agent_inactive';
  }

  async get(workspaceId: string, id: string, admission?: Admission): Promise<Conversation | null> {
    const raw = await this.runner.hget(this.keys(workspaceId).conv, id, admission);
    return raw === null ? null : decodeRecord<Conversation>(raw);
  }

  /** The conversation's owner as stored, or `null` when there is none. */
  private owner(workspaceId: string, id: string, admission?: Admission): Promise<string | null> {
    return this.runner.hget(this.keys(workspaceId).convOwner, id, admission);
  }

  async list(workspaceId: string, { offset, limit, agentId, userId, status }: OffsetPage & ConversationFilter, admission?: Admission): Promise<PageResult<Conversation>> {
    const keys = this.keys(workspaceId);
    if (agentId !== undefined && userId !== undefined) {
      const reply = await this.runner.script(INTERSECTION_PAGE, {
        keys: { indexA: keys.convsByAgent(agentId, status), indexB: keys.convsByUser(userId, status), conv: keys.conv },
        args: { offset, limit },
      }, admission);
      return pageOf<Conversation>(reply);
    }
    const index =
      agentId !== undefined
        ? keys.convsByAgent(agentId, status)
        : userId !== undefined
          ? keys.convsByUser(userId, status)
          : status !== undefined
            ? keys.convsByStatus(status)
            : keys.convs;
    return pageOf<Conversation>(await this.runner.script(PAGE, { keys: { index, hash: keys.conv }, args: { offset, limit } }, admission));
  }

  /**
   * One script (records.lua.ts `RECORD_UPDATE`). A change of `status` moves the conversation
   * between the status indexes of its owner, read first: callers never change `agentId` or
   * `userId`, so the owner is the same when the script runs. `admission` is decided by the
   * first of the two.
   */
  async update(workspaceId: string, id: string, change: Change<Conversation>, admission?: Admission): Promise<WriteResult<Conversation> | null> {
    const keys = this.keys(workspaceId);
    const status = change.set?.status;
    let leave: string[] = [];
    let join: string[] = [];
    if (status !== undefined) {
      const owner = await this.owner(workspaceId, id, admission);
      if (owner === null) return null;
      const { agentId, userId } = parseOwner(owner);
      leave = leavableIndexes(keys, { agentId, userId });
      join = indexesOf(keys, { agentId, userId, status });
    }
    return writeResult(await this.log.write(RECORD_UPDATE, workspaceId, { keys: { hash: keys.conv, leave, join }, args: { id, ...changeArgs(change) } }, change.event, admission));
  }

  /**
   * Reads the stored owner (which decides the index keys), then deletes in one script if
   * `conditions` hold, recording `event` (`conversation.deleted`) with the removal. The read
   * decides `admission`.
   */
  async delete(workspaceId: string, id: string, conditions: DeleteConditions = {}, event?: EventDraft, admission?: Admission): Promise<WriteResult<Conversation> | null> {
    const keys = this.keys(workspaceId);
    const owner = await this.owner(workspaceId, id, admission);
    if (owner === null) return null;
    const reply = await this.log.write(
      CONVERSATION_DELETE,
      workspaceId,
      {
        keys: { conv: keys.conv, convOwner: keys.convOwner, indexes: [keys.convs, ...leavableIndexes(keys, parseOwner(owner))], msg: keys.msg(id), msgs: keys.msgs(id) },
        args: { id, owner, ...conditionArgs(conditions) },
      },
      event,
    );
    return writeResult(reply);
  }
}
