/**
 * @module `/webhooks/:id/…`: an endpoint's deliveries log and the operator actions on its
 * deliveries — retry, recover, test, rotate-secret (README "Receiving webhooks").
 */
import {
  DeliveryAttemptSchema,
  DeliveryListQuerySchema,
  DeliveryListSchema,
  RecoverResultSchema,
  RecoverSchema,
  RetryResultSchema,
  RotateSecretResultSchema,
  RotateSecretSchema,
  WebhookTestSchema,
  type Core,
} from '@parley/core';
import { Hono } from 'hono';
import * as v from 'valibot';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { endpoints, type BodyReader } from './endpoint.js';
import { json } from '../response.js';

const byId = idPath('webhook endpoint', 'wh_');
const byDelivery = v.object({
  id: v.pipe(v.string(), v.description("The webhook endpoint's id (wh_…).")),
  deliveryId: v.pipe(v.string(), v.description("The logged attempt's id (dlv_…).")),
});
const notFound = "No webhook endpoint with this id in the key's workspace.";
const disabled = '`conflict`: the endpoint is disabled; enable it with PATCH {"enabled": true} first.';

/**
 * Delivery routes of webhook endpoints, to be mounted at `/api/webhooks` beside the endpoint
 * routes, behind authentication. Inputs are validated by `core.deliveries`.
 */
export function deliveryRoutes(core: Core, body: BodyReader): Hono<ParleyEnv> {
  const endpoint = endpoints(body);
  return new Hono<ParleyEnv>()
    .get(
      '/:id/deliveries',
      ...endpoint(
        {
          operationId: 'listWebhookDeliveries',
          summary: 'List delivery attempts of a webhook endpoint',
          description:
            "One entry per attempt, newest first; cursor-paged with `before`; `eventId` keeps one event's attempts.",
          tag: 'Webhooks',
          scope: 'webhooks:read',
          path: byId,
          query: DeliveryListQuerySchema,
          success: { status: 200, description: 'A page of the deliveries log.', schema: DeliveryListSchema },
          errors: { 404: notFound },
        },
        async ({ scope, params, query }, c) => {
          return json(c, await core.deliveries.list(scope, params.id, query));
        },
      ),
    )
    .post(
      '/:id/deliveries/:deliveryId/retry',
      ...endpoint(
        {
          operationId: 'retryWebhookDelivery',
          summary: 'Retry a delivery now',
          description:
            'Queues one new attempt (trigger `manual`) of the event of this logged attempt, made right away by a worker; a manual attempt is not retried on failure.',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          path: byDelivery,
          success: { status: 202, description: 'The attempt is queued.', schema: RetryResultSchema },
          errors: { 404: 'No such endpoint or logged attempt, or its event is no longer retained.', 409: disabled },
        },
        async ({ scope, params }, c) => {
          return json(c, await core.deliveries.retry(scope, params.id, params.deliveryId), 202);
        },
      ),
    )
    .post(
      '/:id/recover',
      ...endpoint(
        {
          operationId: 'recoverWebhookDeliveries',
          summary: 'Re-send missed events',
          description:
            'Queues (trigger `recover`, retried on schedule) every retained event that occurred between `since` and `until` (default now), that the endpoint subscribes to and that it has not answered with a 2xx yet.',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          path: byId,
          body: RecoverSchema,
          success: { status: 202, description: 'How many events were queued.', schema: RecoverResultSchema },
          errors: { 404: notFound, 409: disabled },
        },
        async ({ scope, params, body }, c) => {
          return json(c, await core.deliveries.recover(scope, params.id, body), 202);
        },
      ),
    )
    .post(
      '/:id/test',
      ...endpoint(
        {
          operationId: 'testWebhook',
          summary: 'Send a test event',
          description:
            'Sends an example event of `eventType` now, signed like every delivery, with a `webhook-id` starting `evt_test_`, and answers with its log entry (trigger `test`) once the receiver answered (at most 15 s). Works on disabled endpoints too.',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          path: byId,
          body: WebhookTestSchema,
          success: { status: 200, description: 'The attempt as logged.', schema: DeliveryAttemptSchema },
          errors: { 404: notFound },
        },
        async ({ scope, params, body }, c) => {
          return json(c, await core.deliveries.test(scope, params.id, body));
        },
      ),
    )
    .post(
      '/:id/rotate-secret',
      ...endpoint(
        {
          operationId: 'rotateWebhookSecret',
          summary: 'Rotate the signing secret',
          description:
            'Replaces the signing secret with `secret` (or a generated `whsec_` one; the body may be empty). For the next 24 h every delivery carries two signatures, `v1,<new> v1,<old>`, then only the new one.',
          tag: 'Webhooks',
          scope: 'webhooks:write',
          path: byId,
          body: RotateSecretSchema,
          success: { status: 200, description: 'The new secret.', schema: RotateSecretResultSchema },
          errors: { 404: notFound },
        },
        async ({ scope, params, body }, c) => {
          return json(c, await core.deliveries.rotateSecret(scope, params.id, body ?? {}));
        },
      ),
    );
}
