/**
 * @module `/conversations`: start, list, read, complete and delete conversations, send and read
 * their messages and page through their history (docs/api.md#routes, docs/api.md#resources, docs/pagination.md).
 */
import {
  ConversationCreateSchema,
  ConversationListQuerySchema,
  ConversationListSchema,
  ConversationSchema,
  ConversationUpdateSchema,
  DeleteResultSchema,
  MessageCreateSchema,
  MessageHistoryQuerySchema,
  MessageHistorySchema,
  MessageSchema,
  type Core,
} from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import * as v from 'valibot';
import { idPath } from '../openapi/operation.js';
import { endpoints, type BodyReader } from './endpoint.js';
import { jsonWithEntityTag, writeConditions } from './entity-tags.js';
import { json } from '../response.js';

const byId = idPath('conversation', 'conv_');
const notFound = "No conversation with this id in the key's workspace.";
const byMessageId = v.object({
  ...byId.entries,
  messageId: v.pipe(v.string(), v.description("The message's id (msg_…).")),
});

/**
 * Conversation and message routes, to be mounted at `/api/conversations` behind
 * authentication. Messages belong to their conversation, so they use the conversations scopes
 * (docs/authentication.md). Inputs are validated by `core.conversations`.
 */
export function conversationRoutes(core: Core, body: BodyReader): Hono<ParleyEnv> {
  const endpoint = endpoints(body);
  return new Hono<ParleyEnv>()
    .post(
      '/',
      ...endpoint(
        {
          operationId: 'createConversation',
          summary: 'Start a conversation',
          description: 'A new conversation is `active`. Emits `conversation.started`.',
          tag: 'Conversations',
          scope: 'conversations:write',
          body: ConversationCreateSchema,
          success: { status: 201, description: 'The started conversation.', schema: ConversationSchema },
          errors: {
            404: "No agent with this `agentId` in the key's workspace.",
            409: '`conflict`: the agent is inactive.',
          },
        },
        async ({ scope, body }, c) => {
          return json(c, await core.conversations.create(scope, body), 201);
        },
      ),
    )
    .get(
      '/',
      ...endpoint(
        {
          operationId: 'listConversations',
          summary: 'List conversations',
          description: 'Page-numbered, newest first, filtered by `agentId`, `userId` and `status` when given.',
          tag: 'Conversations',
          scope: 'conversations:read',
          query: ConversationListQuerySchema,
          success: {
            status: 200,
            description: 'A page of conversations with the total count.',
            schema: ConversationListSchema,
          },
        },
        async ({ scope, query }, c) => {
          return json(c, await core.conversations.list(scope, query));
        },
      ),
    )
    .get(
      '/:id',
      ...endpoint(
        {
          operationId: 'getConversation',
          summary: 'Get a conversation',
          tag: 'Conversations',
          scope: 'conversations:read',
          path: byId,
          success: { status: 200, description: 'The conversation.', schema: ConversationSchema, etag: true },
          errors: { 404: notFound },
        },
        async ({ scope, params }, c) => {
          return jsonWithEntityTag(c, await core.conversations.get(scope, params.id));
        },
      ),
    )
    .patch(
      '/:id',
      ...endpoint(
        {
          operationId: 'updateConversation',
          summary: 'Update or complete a conversation',
          description:
            '`status: "completed"` completes it (emits `conversation.completed`; again is a no-op); `metadata` replaces the stored object.',
          tag: 'Conversations',
          scope: 'conversations:write',
          path: byId,
          body: ConversationUpdateSchema,
          success: { status: 200, description: 'The whole conversation.', schema: ConversationSchema, etag: true },
          errors: { 404: notFound, 409: '`conflict`: `status: "active"` on a completed conversation.' },
          ifMatch: true,
        },
        async ({ scope, params, body }, c) => {
          return jsonWithEntityTag(c, await core.conversations.update(scope, params.id, body, writeConditions(c)));
        },
      ),
    )
    .delete(
      '/:id',
      ...endpoint(
        {
          operationId: 'deleteConversation',
          summary: 'Delete a conversation',
          description: 'Also deletes its messages. Emits no event.',
          tag: 'Conversations',
          scope: 'conversations:write',
          path: byId,
          ifMatch: true,
          success: { status: 200, description: 'Deleted.', schema: DeleteResultSchema },
          errors: { 404: notFound },
        },
        async ({ scope, params }, c) => {
          const id = params.id;
          await core.conversations.delete(scope, id, writeConditions(c));
          return json(c, { success: true, message: `Conversation ${id} and its messages were deleted.` });
        },
      ),
    )
    .post(
      '/:id/messages',
      ...endpoint(
        {
          operationId: 'sendMessage',
          summary: 'Send a message',
          description:
            'Emits `message.sent` for `user` and `system` messages, `message.received` for `assistant` ones.',
          tag: 'Messages',
          scope: 'conversations:write',
          path: byId,
          body: MessageCreateSchema,
          success: { status: 201, description: 'The stored message.', schema: MessageSchema },
          errors: { 404: notFound, 409: '`conflict`: the conversation is completed.' },
        },
        async ({ scope, params, body }, c) => {
          return json(c, await core.conversations.sendMessage(scope, params.id, body), 201);
        },
      ),
    )
    .get(
      '/:id/messages',
      ...endpoint(
        {
          operationId: 'getMessageHistory',
          summary: 'Get the message history',
          description:
            'A page holds the `limit` newest messages before the `before` cursor (the newest overall without it), oldest first. `nextCursor`, present exactly when `hasMore` is true, fetches the next older page.',
          tag: 'Messages',
          scope: 'conversations:read',
          path: byId,
          query: MessageHistoryQuerySchema,
          success: { status: 200, description: 'A page of history.', schema: MessageHistorySchema },
          errors: {
            400: '`validation_failed` (a bad `limit`) or `invalid_request` (an unparseable, forged or foreign cursor).',
            404: notFound,
          },
        },
        async ({ scope, params, query }, c) => {
          return json(c, await core.conversations.history(scope, params.id, query));
        },
      ),
    )
    .get(
      '/:id/messages/:messageId',
      ...endpoint(
        {
          operationId: 'getMessage',
          summary: 'Get a message',
          tag: 'Messages',
          scope: 'conversations:read',
          path: byMessageId,
          success: { status: 200, description: 'The message.', schema: MessageSchema, etag: true },
          errors: { 404: "No conversation with this id in the key's workspace, or no message with this id in it." },
        },
        async ({ scope, params }, c) => {
          return jsonWithEntityTag(c, await core.conversations.getMessage(scope, params.id, params.messageId));
        },
      ),
    );
}
