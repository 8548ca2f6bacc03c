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
} from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { endpoints, type BodyReader } from './endpoint.js';
import { jsonWithEntityTag, writeConditions } from './entity-tags.js';
import { json } from '../response.js';

const byId = idPath('webhook endpoint', 'wh_');
const notFound = "No webhook endpoint with this id in the key's workspace.";

/**
 * Webhook endpoint routes, to be mounted at `/api/webhooks` behind authentication. Responses
 * never carry the stored secret; registration returns a generated one once (core decides).
 * `GET /:id/deliveries` arrives with webhook delivery.
 */
export function webhookRoutes(core: Core, body: BodyReader): Hono<ParleyEnv> {
  const endpoint = endpoints(body);
  return new Hono<ParleyEnv>()
    .post(
      '/',
      ...endpoint(
        {
          operationId: 'createWebhook',
          summary: 'Register a webhook endpoint',
          description: 'Without a `secret`, Parley generates a `whsec_` one and returns it in this response only.',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          body: WebhookCreateSchema,
          success: {
            status: 201,
            description: 'The enabled endpoint (with `secret` only when generated).',
            schema: WebhookEndpointCreatedSchema,
          },
        },
        async ({ scope, body }, c) => {
          return json(c, await core.webhooks.create(scope, body), 201);
        },
      ),
    )
    .get(
      '/',
      ...endpoint(
        {
          operationId: 'listWebhooks',
          summary: 'List webhook endpoints',
          description: 'Page-numbered, newest first.',
          tag: 'Webhooks',
          scope: 'webhooks:read',
          query: WebhookListQuerySchema,
          success: {
            status: 200,
            description: 'A page of endpoints with the total count.',
            schema: WebhookEndpointListSchema,
          },
        },
        async ({ scope, query }, c) => {
          return json(c, await core.webhooks.list(scope, query));
        },
      ),
    )
    .get(
      '/:id',
      ...endpoint(
        {
          operationId: 'getWebhook',
          summary: 'Get a webhook endpoint',
          tag: 'Webhooks',
          scope: 'webhooks:read',
          path: byId,
          success: {
            status: 200,
            description: 'The endpoint, without its secret.',
            schema: WebhookEndpointSchema,
            etag: true,
          },
          errors: { 404: notFound },
        },
        async ({ scope, params }, c) => {
          return jsonWithEntityTag(c, await core.webhooks.get(scope, params.id));
        },
      ),
    )
    .patch(
      '/:id',
      ...endpoint(
        {
          operationId: 'updateWebhook',
          summary: 'Update a webhook endpoint',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          path: byId,
          body: WebhookUpdateSchema,
          success: {
            status: 200,
            description: 'The whole updated endpoint.',
            schema: WebhookEndpointSchema,
            etag: true,
          },
          errors: { 404: notFound },
          ifMatch: true,
        },
        async ({ scope, params, body }, c) => {
          return jsonWithEntityTag(c, await core.webhooks.update(scope, params.id, body, writeConditions(c)));
        },
      ),
    )
    .delete(
      '/:id',
      ...endpoint(
        {
          operationId: 'deleteWebhook',
          summary: 'Delete a webhook endpoint',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          path: byId,
          success: { status: 200, description: 'Deleted.', schema: DeleteResultSchema },
          errors: { 404: notFound },
          ifMatch: true,
        },
        async ({ scope, params }, c) => {
          const id = params.id;
          await core.webhooks.delete(scope, id, writeConditions(c));
          return json(c, { success: true, message: `Webhook endpoint ${id} was deleted.` });
        },
      ),
    );
}
