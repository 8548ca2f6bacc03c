/** @module Conversations, their messages and history paging (docs/api.md#routes, docs/api.md#resources, docs/pagination.md). */
import { inject, injectable } from '../di.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import type { WorkspaceScope } from '../ports/scope.js';
import type { Storage } from '../ports/storage.js';
import {
  ConversationCreateSchema,
  ConversationListQuerySchema,
  ConversationUpdateSchema,
  MessageCreateSchema,
  MessageHistoryQuerySchema,
  type ConversationCreateInput,
  type ConversationListQuery,
  type ConversationUpdateInput,
  type MessageCreateInput,
  type MessageHistoryQuery,
} from '../schemas/conversation.js';
import { TOKENS } from '../tokens.js';
import type { Conversation, Message } from '../types.js';
import { parse } from '../validation.js';
import { decodeCursor, encodeCursor, invalidCursor } from './cursor.js';
import type { Change, WriteResult } from '../ports/storage.js';
import { withVersion } from '../record-version.js';
import { domainEvent, eventDraft } from './domain-events.js';
import { ifMatchVersions, preconditionFailed, versionMatches, type WriteConditions } from './entity-tag.js';
import { conversationView } from './conversation-view.js';
import { isoTimestamp } from './timestamp.js';
import { MessageWriter } from './message-writer.js';

/** A page of conversations: `page` and `limit` echo the (defaulted) query. */
export interface ConversationList {
  conversations: Conversation[];
  total: number;
  page: number;
  limit: number;
}

/**
 * One page of history, oldest first. `nextCursor` is present exactly when `hasMore` is true and
 * fetches the next older page when passed as `before`.
 */
export interface MessageHistory {
  messages: Message[];
  hasMore: boolean;
  nextCursor?: string;
}

/**
 * Conversations with agents and their messages. Every method takes the {@link WorkspaceScope} first, passed
 * on to every port call; another workspace's conversation is `not_found`.
 */
@injectable()
export class ConversationService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
    // Messages take one path into storage and to live streams, shared with agent replies.
    @inject(MessageWriter) private readonly writer: MessageWriter,
  ) {}

  /**
   * Starts an `active` conversation, recording `conversation.started` with it. The agent's
   * existence and status are checked by the store in the same atomic step as the write.
   * @throws ParleyError `validation_failed`; `not_found` (no such agent); `conflict` (agent inactive)
   */
  async create(scope: WorkspaceScope, input: ConversationCreateInput): Promise<Conversation> {
    const fields = parse(ConversationCreateSchema, input);
    const createdAt = isoTimestamp(this.clock.now());
    const conversation: Conversation = {
      id: this.ids.next('conv'),
      agentId: fields.agentId,
      userId: fields.userId ?? null,
      metadata: fields.metadata ?? {},
      status: 'active',
      createdAt,
      updatedAt: createdAt,
      lastMessageAt: null,
      pendingToolCalls: [],
    };
    const event = this.event(scope, 'conversation.started', conversation);
    const outcome = await this.storage.conversations.insert(scope, conversation, { event });
    if (outcome === 'agent_not_found') throw ParleyError.notFound('agent', fields.agentId);
    if (outcome === 'agent_inactive') {
      throw new ParleyError(
        ErrorCode.conflict,
        `Agent '${fields.agentId}' is inactive and cannot start conversations.`,
      );
    }
    return withVersion(conversation, 1);
  }

  /** @throws ParleyError `not_found` */
  async get(scope: WorkspaceScope, id: string): Promise<Conversation> {
    const conversation = await this.storage.conversations.get(scope, id);
    if (!conversation) throw ParleyError.notFound('conversation', id);
    return conversationView(conversation);
  }

  /** Newest first, filtered by `agentId`, `userId` and `status` when given. */
  async list(scope: WorkspaceScope, query: ConversationListQuery = {}): Promise<ConversationList> {
    const { page, limit, ...filter } = parse(ConversationListQuerySchema, query);
    const { items, total } = await this.storage.conversations.list(scope, {
      offset: (page - 1) * limit,
      limit,
      ...filter,
    });
    return { conversations: items.map(conversationView), total, page, limit };
  }

  /**
   * Replaces `metadata` and/or moves `status` from `active` to `completed`, emitting
   * `conversation.completed` on that transition — once, however many requests complete the
   * conversation at the same time: the store applies the change only `where` the stored status is
   * `active`, in one atomic step (ports/storage.ts `Change`). Completing twice is a no-op (a
   * `metadata` given with it is still stored); `status: "active"` is a no-op while active.
   * With `conditions.ifMatch`, nothing changes unless the conversation's {@link entityTag}
   * matches, decided in the same step as the write.
   * @throws ParleyError `validation_failed`, `invalid_request` (malformed `ifMatch`), `not_found`,
   *   `precondition_failed`; `conflict` (reactivating a completed one)
   */
  async update(
    scope: WorkspaceScope,
    id: string,
    input: ConversationUpdateInput,
    conditions: WriteConditions = {},
  ): Promise<Conversation> {
    const { metadata, status } = parse(ConversationUpdateSchema, input);
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    const change = (extra: Partial<Change<Conversation>>): Promise<WriteResult<Conversation> | null> =>
      this.storage.conversations.update(scope, id, {
        ...extra,
        set: { ...(metadata !== undefined && { metadata }), ...extra.set },
        touch: isoTimestamp(this.clock.now()),
        ifVersion,
      });
    const whileActive = [{ field: 'status', equals: 'active' }] as const;
    let result: WriteResult<Conversation> | null;
    if (status === 'completed') {
      result = await change({
        set: { status: 'completed' },
        where: whileActive,
        event: this.draft(scope, 'conversation.completed'),
      });
      if (result?.outcome === 'applied') {
        await this.writer.signal(scope, id, { type: 'conversation.completed' });
        return conversationView(result.record);
      }
      // Completed already (a terminal state, so no second step can find it active again).
      if (result && versionMatches(ifVersion, result.record) && metadata !== undefined) result = await change({});
    } else if (metadata !== undefined) {
      result = await change(status === 'active' ? { where: whileActive } : {});
    } else {
      result = await this.storage.conversations
        .get(scope, id)
        .then((record) => record && { outcome: 'unmet' as const, record });
    }
    if (!result) throw ParleyError.notFound('conversation', id);
    const { outcome, record } = result;
    if (outcome === 'applied') return conversationView(record);
    if (!versionMatches(ifVersion, record)) throw preconditionFailed(conversationView(record));
    if (status === 'active' && record.status === 'completed') {
      throw new ParleyError(ErrorCode.conflict, `Conversation '${id}' is completed and cannot be reactivated.`);
    }
    return conversationView(record);
  }

  /**
   * Deletes the conversation and all its messages, emitting `conversation.deleted` (data: the
   * conversation as it was) in the same atomic step. With `conditions.ifMatch`, deletes only while the
   * conversation's ETag matches, checked in the same atomic step as the removal.
   * @throws ParleyError `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async delete(scope: WorkspaceScope, id: string, conditions: WriteConditions = {}): Promise<void> {
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    const result = await this.storage.conversations.delete(scope, id, {
      event: this.draft(scope, 'conversation.deleted'),
      ifVersion,
    });
    if (!result) throw ParleyError.notFound('conversation', id);
    if (result.outcome === 'unmet') throw preconditionFailed(conversationView(result.record));
  }

  /**
   * One message of a conversation.
   * @throws ParleyError `not_found` (no such conversation, or no such message in it)
   */
  async getMessage(scope: WorkspaceScope, conversationId: string, messageId: string): Promise<Message> {
    const message = await this.storage.messages.get(scope, conversationId, messageId);
    if (message) return message;
    await this.get(scope, conversationId);
    throw ParleyError.notFound('message', messageId);
  }

  /**
   * Stores a message, recording `message.sent` (roles `user`, `system`) or `message.received`
   * (role `assistant`) with it; the conversation's status is checked in the same atomic step.
   * @throws ParleyError `validation_failed`, `not_found`; `conflict` (conversation completed)
   */
  async sendMessage(scope: WorkspaceScope, conversationId: string, input: MessageCreateInput): Promise<Message> {
    const fields = parse(MessageCreateSchema, input);
    const message: Message = {
      id: this.ids.next('msg'),
      conversationId,
      content: fields.content,
      role: fields.role,
      metadata: fields.metadata ?? {},
      toolCalls: null,
      toolCallId: null,
      createdAt: isoTimestamp(this.clock.now()),
    };
    const outcome = await this.writer.append(scope, message);
    if (outcome === 'conversation_not_found') throw ParleyError.notFound('conversation', conversationId);
    if (outcome === 'conversation_completed') {
      throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' is completed and takes no messages.`);
    }
    return message;
  }

  /**
   * A page of history, oldest first: the `limit` (1–100, default 50) newest messages before the
   * `before` cursor (the newest overall without it), or the `limit` oldest messages after the
   * `after` cursor; then `nextCursor` (when `hasMore`) continues in the same direction.
   * @throws ParleyError `validation_failed` (also for `before` with `after`), `not_found`;
   *   `invalid_request` (forged or foreign cursor)
   */
  async history(
    scope: WorkspaceScope,
    conversationId: string,
    query: MessageHistoryQuery = {},
  ): Promise<MessageHistory> {
    const { limit, before, after } = parse(MessageHistoryQuerySchema, query);
    // One storage call: the page read also checks the conversation exists (`requireConversation`);
    // only a refusal costs a second one, to tell a missing conversation (404) from a bad cursor.
    let cursor: string | undefined;
    try {
      cursor = after ?? before;
      cursor = cursor === undefined ? undefined : decodeCursor(conversationId, cursor);
    } catch (error) {
      // A missing conversation is 404 before its cursor is judged (docs/errors.md#precedence).
      await this.get(scope, conversationId);
      throw error;
    }
    const read =
      after === undefined
        ? { before: cursor, limit, requireConversation: true }
        : { after: cursor, limit, requireConversation: true };
    const page = await this.storage.messages.page(scope, conversationId, read);
    if (!page) {
      await this.get(scope, conversationId);
      throw invalidCursor();
    }
    // Forward pages continue after their newest message, backward ones before their oldest.
    const edge = after === undefined ? page.messages[0] : page.messages.at(-1);
    if (!page.hasMore || !edge) return { messages: page.messages, hasMore: false };
    return { messages: page.messages, hasMore: true, nextCursor: encodeCursor(conversationId, edge.id) };
  }

  private event(scope: WorkspaceScope, type: 'conversation.started', data: Conversation) {
    return domainEvent(this.ids, this.clock, scope.workspaceId, type, data);
  }

  private draft(scope: WorkspaceScope, type: 'conversation.completed' | 'conversation.deleted') {
    return eventDraft(this.ids, this.clock, scope.workspaceId, type);
  }
}
