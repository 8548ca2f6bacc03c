/**
 * @module `/conversations`: start, list, read and complete conversations, send their messages
 * and page through their history (spec §4.2, decisions §4–§5).
 */
import type {
  ConversationCreateInput,
  ConversationListQuery,
  ConversationUpdateInput,
  Core,
  MessageCreateInput,
  MessageHistoryQuery,
} from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { requireScope } from '../middleware/require-scope.js';

/**
 * Conversation and message routes, to be mounted at `/api/conversations` behind
 * authentication. Messages belong to their conversation, so they use the conversations scopes
 * (decisions §6). Inputs are validated by `core.conversations`; the casts only name the types it
 * checks against.
 */
export function conversationRoutes(core: Core, body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>): Hono<ParleyEnv> {
  const read = requireScope('conversations:read');
  const write = requireScope('conversations:write');
  return new Hono<ParleyEnv>()
    .post('/', write, body, async (c) => {
      const input = c.req.valid('json') as ConversationCreateInput;
      return c.json(await core.conversations.create(c.var.principal.workspaceId, input), 201);
    })
    .get('/', read, async (c) => {
      return c.json(await core.conversations.list(c.var.principal.workspaceId, c.req.query() as ConversationListQuery));
    })
    .get('/:id', read, async (c) => {
      return c.json(await core.conversations.get(c.var.principal.workspaceId, c.req.param('id')));
    })
    .patch('/:id', write, body, async (c) => {
      const input = c.req.valid('json') as ConversationUpdateInput;
      return c.json(await core.conversations.update(c.var.principal.workspaceId, c.req.param('id'), input));
    })
    .post('/:id/messages', write, body, async (c) => {
      const input = c.req.valid('json') as MessageCreateInput;
      return c.json(await core.conversations.sendMessage(c.var.principal.workspaceId, c.req.param('id'), input), 201);
    })
    .get('/:id/messages', read, async (c) => {
      const query = c.req.query() as MessageHistoryQuery;
      return c.json(await core.conversations.history(c.var.principal.workspaceId, c.req.param('id'), query));
    });
}
