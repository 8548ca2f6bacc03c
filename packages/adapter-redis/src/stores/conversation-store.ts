/**
 * @module Conversations on Redis: a HASH of records, a HASH of their owners (agent and user),
 * and sorted-set indexes per workspace, per status, per agent, per user, and per agent or
 * user × status.
 */
import type { Conversation, DomainEvent, PageResult } from '@parley/core';
import {
  CONVERSATION_STATUSES,
  type Change,
  type ConversationFilter,
  type ConversationStore,
  type DeleteOptions,
  type EventDraft,
  type OffsetPage,
  type WriteResult,
} from '@parley/core/adapter';
import type { WorkspaceScope } from '@parley/core';
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
function indexesOf(
  keys: WorkspaceKeys,
  { agentId, userId, status }: Pick<Conversation, 'agentId' | 'userId' | 'status'>,
): string[] {
  const indexes = [
    keys.convs,
    keys.convsByStatus(status),
    keys.convsByAgent(agentId),
    keys.convsByAgent(agentId, status),
  ];
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
export function conversationStore(log: EventLog): ConversationStore {
  const { runner } = log;
  const keysOf = (workspaceId: string) => workspaceKeys(runner.prefix, workspaceId);

  /** The conversation's owner as stored, or `null` when there is none. */
  function ownerOf(scope: WorkspaceScope, id: string): Promise<string | null> {
    return runner.hget(keysOf(scope.workspaceId).convOwner, id, scope);
  }

  return {
    async insert(
      scope: WorkspaceScope,
      conversation: Conversation,
      { event }: { event: DomainEvent },
    ): Promise<'inserted' | 'agent_not_found' | 'agent_inactive'> {
      const keys = keysOf(scope.workspaceId);
      const reply = await log.write(
        CONVERSATION_INSERT,
        scope,
        {
          keys: {
            agent: keys.agent,
            activeAgents: keys.agentsByStatus('active'),
            conv: keys.conv,
            convOwner: keys.convOwner,
            indexes: indexesOf(keys, conversation),
          },
          args: {
            agentId: conversation.agentId,
            id: conversation.id,
            stored: encodeRecord(conversation),
            owner: conversationOwner(conversation),
          },
        },
        event,
      );
      return reply as 'inserted' | 'agent_not_found' | 'agent_inactive';
    },

    async get(scope: WorkspaceScope, id: string): Promise<Conversation | null> {
      const raw = await runner.hget(keysOf(scope.workspaceId).conv, id, scope);
      return raw === null ? null : decodeRecord<Conversation>(raw);
    },

    async list(
      scope: WorkspaceScope,
      { offset, limit, agentId, userId, status }: OffsetPage & ConversationFilter,
    ): Promise<PageResult<Conversation>> {
      const keys = keysOf(scope.workspaceId);
      if (agentId !== undefined && userId !== undefined) {
        const reply = await runner.script(
          INTERSECTION_PAGE,
          {
            keys: {
              indexA: keys.convsByAgent(agentId, status),
              indexB: keys.convsByUser(userId, status),
              conv: keys.conv,
            },
            args: { offset, limit },
          },
          scope,
        );
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
      return pageOf<Conversation>(
        await runner.script(PAGE, { keys: { index, hash: keys.conv }, args: { offset, limit } }, scope),
      );
    },

    /**
     * One script (records.lua.ts `RECORD_UPDATE`). A change of `status` moves the conversation
     * between the status indexes of its owner, read first: callers never change `agentId` or
     * `userId`, so the owner is the same when the script runs. The scope's pending rate limit is
     * decided by the first of the two.
     */
    async update(
      scope: WorkspaceScope,
      id: string,
      change: Change<Conversation>,
    ): Promise<WriteResult<Conversation> | null> {
      const keys = keysOf(scope.workspaceId);
      const status = change.set?.status;
      let leave: string[] = [];
      let join: string[] = [];
      if (status !== undefined) {
        const owner = await ownerOf(scope, id);
        if (owner === null) return null;
        const { agentId, userId } = parseOwner(owner);
        leave = leavableIndexes(keys, { agentId, userId });
        join = indexesOf(keys, { agentId, userId, status });
      }
      return writeResult(
        await log.write(
          RECORD_UPDATE,
          scope,
          { keys: { hash: keys.conv, leave, join }, args: { id, ...changeArgs(change) } },
          change.event,
        ),
      );
    },

    /**
     * Reads the stored owner (which decides the index keys), then deletes in one script if
     * `ifVersion` holds, recording `event` (`conversation.deleted`) with the removal. The read
     * decides the scope's pending rate limit.
     */
    async delete(
      scope: WorkspaceScope,
      id: string,
      { event, ...conditions }: DeleteOptions = {},
    ): Promise<WriteResult<Conversation> | null> {
      const keys = keysOf(scope.workspaceId);
      const owner = await ownerOf(scope, id);
      if (owner === null) return null;
      const reply = await log.write(
        CONVERSATION_DELETE,
        scope,
        {
          keys: {
            conv: keys.conv,
            convOwner: keys.convOwner,
            indexes: [keys.convs, ...leavableIndexes(keys, parseOwner(owner))],
            msg: keys.msg(id),
            msgs: keys.msgs(id),
          },
          args: { id, owner, ...conditionArgs(conditions) },
        },
        event,
      );
      return writeResult(reply);
    },
  };
}
