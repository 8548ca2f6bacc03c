/** @module `/conversations/:id/messages`: send messages and page through history (spec §4.2, decisions §5). */
import type { Core, MessageCreateInput, MessageHistoryQuery } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { requireScope } from '../middleware/require-scope.js';

/**
 * Message routes, to be mounted at `/api/conversations` behind authentication. Messages belong
 * to conversations, so they use the conversations scopes (decisions §6).
 */
export function messageRoutes(core: Core, body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>): Hono<ParleyEnv> {
  const read = requireScope('conversations:read');
  const write = requireScope('conversations:write');
  return new Hono<ParleyEnv>()
    .post('/:id/messages', write, body, async (c) => {
      const input = c.req.valid('json') as MessageCreateInput;
      return c.json(await core.conversations.sendMessage(c.var.principal.workspaceId, c.req.param('id'), input), 201);
    })
    .get('/:id/messages', read, async (c) => {
      const query = c.req.query() as MessageHistoryQuery;
      return c.json(await core.conversations.history(c.var.principal.workspaceId, c.req.param('id'), query));
    });
}
