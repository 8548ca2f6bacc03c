/** @module `/webhooks`: register, list, read, update and remove webhook endpoints (spec §4.3, decisions §4). */
import type { Core, WebhookCreateInput, WebhookListQuery, WebhookUpdateInput } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { requireScope } from '../middleware/require-scope.js';

/**
 * Webhook endpoint routes, to be mounted at `/api/webhooks` behind authentication. Responses
 * never carry the stored secret; registration returns a generated one once (core decides).
 * `GET /:id/deliveries` arrives with webhook delivery.
 */
export function webhookRoutes(core: Core, body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>): Hono<ParleyEnv> {
  const read = requireScope('webhooks:read');
  const write = requireScope('webhooks:write');
  return new Hono<ParleyEnv>()
    .post('/', write, body, async (c) => {
      const input = c.req.valid('json') as WebhookCreateInput;
      return c.json(await core.webhooks.create(c.var.principal.workspaceId, input), 201);
    })
    .get('/', read, async (c) => {
      return c.json(await core.webhooks.list(c.var.principal.workspaceId, c.req.query() as WebhookListQuery));
    })
    .get('/:id', read, async (c) => {
      return c.json(await core.webhooks.get(c.var.principal.workspaceId, c.req.param('id')));
    })
    .patch('/:id', write, body, async (c) => {
      const input = c.req.valid('json') as WebhookUpdateInput;
      return c.json(await core.webhooks.update(c.var.principal.workspaceId, c.req.param('id'), input));
    })
    .delete('/:id', write, async (c) => {
      const id = c.req.param('id');
      await core.webhooks.delete(c.var.principal.workspaceId, id);
      return c.json({ success: true, message: `Webhook endpoint ${id} was deleted.` });
    });
}
