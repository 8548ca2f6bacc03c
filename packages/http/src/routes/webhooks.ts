/** @module `/webhooks`: register, list, read, update and remove webhook endpoints (docs/api.md#routes, docs/api.md#resources). */
import {
  DeleteResultSchema,
  WebhookCreateSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookListQuerySchema,
  WebhookUpdateSchema,
  type Core,
  type WebhookCreateInput,
  type WebhookListQuery,
  type WebhookUpdateInput,
} from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { documentAndRequireScope, idPath } from '../openapi/operation.js';
import { jsonWithEntityTag, writeConditions } from './entity-tags.js';

const byId = idPath('webhook endpoint', 'wh_');
const notFound = 'No webhook endpoint with this id in the key\'s workspace.';

/**
 * Webhook endpoint routes, to be mounted at `/api/webhooks` behind authentication. Responses
 * never carry the stored secret; registration returns a generated one once (core decides).
 * `GET /:id/deliveries` arrives with webhook delivery.
 */
export function webhookRoutes(core: Core, body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>): Hono<ParleyEnv> {
  return new Hono<ParleyEnv>()
    .post(
      '/',
      documentAndRequireScope({
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description: 'Without a `secret`, Parley generates a `whsec_` one and returns it in this response only.',
        tag: 'Webhooks',
        scope: 'webhooks:write',
        body: WebhookCreateSchema,
        success: { status: 201, description: 'The enabled endpoint (with `secret` only when generated).', schema: WebhookEndpointCreatedSchema },
      }),
      body,
      async (c) => {
        const input = c.req.valid('json') as WebhookCreateInput;
        return c.json(await core.webhooks.create(c.var.principal.workspaceId, input), 201);
      },
    )
    .get(
      '/',
      documentAndRequireScope({
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        description: 'Page-numbered, newest first.',
        tag: 'Webhooks',
        scope: 'webhooks:read',
        query: WebhookListQuerySchema,
        success: { status: 200, description: 'A page of endpoints with the total count.', schema: WebhookEndpointListSchema },
      }),
      async (c) => {
        return c.json(await core.webhooks.list(c.var.principal.workspaceId, c.req.query() as WebhookListQuery));
      },
    )
    .get(
      '/:id',
      documentAndRequireScope({
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        tag: 'Webhooks',
        scope: 'webhooks:read',
        path: byId,
        success: { status: 200, description: 'The endpoint, without its secret.', schema: WebhookEndpointSchema, etag: true },
        errors: { 404: notFound },
      }),
      async (c) => {
        return jsonWithEntityTag(c, await core.webhooks.get(c.var.principal.workspaceId, c.req.param('id')));
      },
    )
    .patch(
      '/:id',
      documentAndRequireScope({
        operationId: 'updateWebhook',
        summary: 'Update a webhook endpoint',
        tag: 'Webhooks',
        scope: 'webhooks:write',
        path: byId,
        body: WebhookUpdateSchema,
        success: { status: 200, description: 'The whole updated endpoint.', schema: WebhookEndpointSchema, etag: true },
        errors: { 404: notFound },
        ifMatch: true,
      }),
      body,
      async (c) => {
        const input = c.req.valid('json') as WebhookUpdateInput;
        return jsonWithEntityTag(c, await core.webhooks.update(c.var.principal.workspaceId, c.req.param('id'), input, writeConditions(c)));
      },
    )
    .delete(
      '/:id',
      documentAndRequireScope({
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        tag: 'Webhooks',
        scope: 'webhooks:write',
        path: byId,
        success: { status: 200, description: 'Deleted.', schema: DeleteResultSchema },
        errors: { 404: notFound },
        ifMatch: true,
      }),
      async (c) => {
        const id = c.req.param('id');
        await core.webhooks.delete(c.var.principal.workspaceId, id, writeConditions(c));
        return c.json({ success: true, message: `Webhook endpoint ${id} was deleted.` });
      },
    );
}
