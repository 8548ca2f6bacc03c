/** @module Schemas of webhook delivery: the deliveries log and the operator actions (README "Receiving webhooks"). */
import * as v from 'valibot';
import { DELIVERY_TRIGGERS, EVENT_TYPES } from '../types.js';
import { integerParam, text } from './common.js';
import { WebhookSecretSchema } from './webhook.js';

/** Default and largest `limit` of a deliveries log page. */
export const DELIVERY_LIMIT = { default: 50, max: 100 } as const;

/** Query of `GET /api/webhooks/:id/deliveries`: newest first, cursor `before`, only one event's attempts with `eventId`. */
export const DeliveryListQuerySchema = v.strictObject({
  limit: v.optional(integerParam(1, DELIVERY_LIMIT.max), DELIVERY_LIMIT.default),
  before: v.optional(v.pipe(text(512), v.description('Cursor: the nextCursor of the previous page.'))),
  eventId: v.optional(v.pipe(text(128), v.description('Only the attempts of this event (evt_…).'))),
});
export type DeliveryListQuery = v.InferInput<typeof DeliveryListQuerySchema>;

const instant = v.pipe(
  v.string(),
  v.isoTimestamp('Expected an ISO 8601 timestamp, e.g. 2026-11-21T10:00:00.000Z.'),
  v.description('ISO 8601 timestamp, e.g. 2026-11-21T10:00:00.000Z.'),
);

/** Body of `POST /api/webhooks/:id/recover`: the window of event times, `until` defaulting to now. */
export const RecoverSchema = v.pipe(
  v.strictObject({ since: instant, until: v.optional(instant) }),
  v.forward(
    v.check(
      (input) => input.until === undefined || Date.parse(input.until) >= Date.parse(input.since),
      'Expected until to be at or after since.',
    ),
    ['until'],
  ),
);
export type RecoverInput = v.InferInput<typeof RecoverSchema>;

/** Body of `POST /api/webhooks/:id/test`: which event type to send an example of. */
export const WebhookTestSchema = v.strictObject({ eventType: v.picklist(EVENT_TYPES) });
export type WebhookTestInput = v.InferInput<typeof WebhookTestSchema>;

/** Body of `POST /api/webhooks/:id/rotate-secret`: the new secret, generated when absent. */
export const RotateSecretSchema = v.strictObject({ secret: v.optional(WebhookSecretSchema) });
export type RotateSecretInput = v.InferInput<typeof RotateSecretSchema>;

const timestamp = v.pipe(v.string(), v.isoTimestamp(), v.description('ISO 8601 UTC with milliseconds.'));

/** One attempt in the deliveries log. */
export const DeliveryAttemptSchema = v.object({
  id: v.pipe(v.string(), v.startsWith('dlv_'), v.description('Opaque id starting with dlv_, sortable by time.')),
  eventId: v.pipe(
    v.string(),
    v.description('The event delivered: its evt_ id, also the webhook-id header (evt_test_… for tests).'),
  ),
  eventType: v.picklist(EVENT_TYPES),
  attempt: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.description('1-based number within its schedule; manual retries and tests count from 1.'),
  ),
  trigger: v.pipe(
    v.picklist(DELIVERY_TRIGGERS),
    v.description('scheduled: the retry schedule; manual: a retry asked for; recover: a recovery; test: a test event.'),
  ),
  status: v.pipe(
    v.nullable(v.number()),
    v.description('The HTTP status received; null when none was (refused target, connection error, timeout).'),
  ),
  durationMs: v.pipe(v.number(), v.minValue(0)),
  error: v.pipe(v.nullable(v.string()), v.description('Why no response arrived; null when one did.')),
  responseBody: v.pipe(
    v.nullable(v.string()),
    v.description('The first 4 KiB of the response body; null without a response.'),
  ),
  nextAttemptAt: v.pipe(
    v.nullable(v.pipe(v.string(), v.isoTimestamp())),
    v.description(
      'When the next attempt of this event is due, as scheduled after this one (ISO 8601 UTC); null when none is: a success, the last attempt, a manual retry or test, a disabled endpoint.',
    ),
  ),
  createdAt: timestamp,
});

/** `GET /api/webhooks/:id/deliveries`: newest first; `nextCursor` is present exactly when `hasMore`. */
export const DeliveryListSchema = v.object({
  deliveries: v.array(DeliveryAttemptSchema),
  hasMore: v.boolean(),
  nextCursor: v.optional(v.pipe(v.string(), v.description('Pass as `before` to fetch the next older page.'))),
});

/** Answer of `POST /api/webhooks/:id/recover`. */
export const RecoverResultSchema = v.object({
  events: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.description('How many events were queued to be sent again.'),
  ),
});

/** Answer of `POST /api/webhooks/:id/deliveries/:deliveryId/retry`. */
export const RetryResultSchema = v.object({ eventId: v.string(), queued: v.literal(true) });

/** Answer of `POST /api/webhooks/:id/rotate-secret`. */
export const RotateSecretResultSchema = v.object({
  secret: v.pipe(v.string(), v.description('The new signing secret.')),
  previousSecretExpiresAt: v.pipe(
    v.string(),
    v.isoTimestamp(),
    v.description(
      'Until when the secret it replaced also signs deliveries (24 h from now). A secret replaced earlier keeps its own expiry; at most three secrets sign at once.',
    ),
  ),
});
