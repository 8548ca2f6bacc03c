/** @module Conversation and message request schemas (docs/api.md#routes, docs/api.md#resources, docs/pagination.md). */
import * as v from 'valibot';
import { CONVERSATION_STATUSES, POSTABLE_MESSAGE_ROLES } from '../types.js';
import { JsonObjectSchema, PageQueryEntries, integerParam, text } from './common.js';

const status = v.picklist(CONVERSATION_STATUSES);

/** Body of `POST /api/conversations`. */
export const ConversationCreateSchema = v.strictObject({
  agentId: text(256),
  userId: v.optional(text(256)),
  metadata: v.optional(JsonObjectSchema),
});
export type ConversationCreateInput = v.InferInput<typeof ConversationCreateSchema>;

/**
 * Body of `PATCH /api/conversations/:id`: `status: "completed"` completes (once; again is a
 * no-op), `"active"` is a no-op while active; `metadata` replaces the stored object.
 */
export const ConversationUpdateSchema = v.strictObject({
  status: v.optional(status),
  metadata: v.optional(JsonObjectSchema),
});
export type ConversationUpdateInput = v.InferInput<typeof ConversationUpdateSchema>;

/** Query of `GET /api/conversations`. */
export const ConversationListQuerySchema = v.strictObject({
  ...PageQueryEntries,
  agentId: v.optional(text(256)),
  userId: v.optional(text(256)),
  status: v.optional(status),
});
export type ConversationListQuery = v.InferInput<typeof ConversationListQuerySchema>;

/** Body of `POST /api/conversations/:id/messages`; `content` 1–100 000 characters. */
export const MessageCreateSchema = v.strictObject({
  content: text(100_000),
  role: v.picklist(POSTABLE_MESSAGE_ROLES),
  metadata: v.optional(JsonObjectSchema),
});
export type MessageCreateInput = v.InferInput<typeof MessageCreateSchema>;

/** Default and largest `limit` of a history page (docs/pagination.md). */
export const HISTORY_LIMIT = { default: 50, max: 100 } as const;

/**
 * Query of `GET /api/conversations/:id/messages`: `limit` 1–100 (default 50), and one cursor:
 * `before` (older pages) or `after` (newer pages); both together are refused.
 */
export const MessageHistoryQuerySchema = v.pipe(
  v.strictObject({
    limit: v.optional(integerParam(1, HISTORY_LIMIT.max), HISTORY_LIMIT.default),
    before: v.optional(
      v.pipe(
        text(512),
        v.description('Cursor: the nextCursor of the previous (newer) page; lists the messages before it.'),
      ),
    ),
    after: v.optional(
      v.pipe(
        text(512),
        v.description(
          "Cursor: the nextCursor of an `after` page, or a stream event's `id`; lists the oldest messages after it. Not with `before`.",
        ),
      ),
    ),
  }),
  v.check((query) => query.before === undefined || query.after === undefined, 'Give before or after, not both.'),
);
export type MessageHistoryQuery = v.InferInput<typeof MessageHistoryQuerySchema>;

/**
 * Query of `GET /api/conversations/:id/stream`: `after`, a cursor (a `message` event's `id`) to
 * resume after; the `Last-Event-ID` header takes precedence.
 */
export const ConversationStreamQuerySchema = v.strictObject({
  after: v.optional(
    v.pipe(
      text(512),
      v.description(
        "Cursor: resume after this message (a `message` event's `id`). `Last-Event-ID` wins when both are sent.",
      ),
    ),
  ),
});
export type ConversationStreamQuery = v.InferInput<typeof ConversationStreamQuerySchema>;
