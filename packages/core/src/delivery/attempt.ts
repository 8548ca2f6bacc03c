/** @module One delivery attempt: sign, send, and record it in the endpoint's deliveries log. */
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import type { Storage } from '../ports/storage.js';
import type { WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js';
import type { DeliveryAttempt, DeliveryTrigger, DomainEvent, WebhookEndpointRecord } from '../types.js';
import { signWebhook } from './signing.js';
import type { WorkspaceScope } from '../ports/scope.js';

/** What an attempt needs. */
export interface AttemptContext {
  storage: Storage;
  transport: WebhookTransport;
  clock: Clock;
  ids: IdGenerator;
}

/** An attempt made: its log entry (already recorded) and the transport's full answer. */
export interface AttemptOutcome {
  entry: DeliveryAttempt;
  response: WebhookResponse;
}

/** True for a 2xx status, the only success (README "Receiving webhooks"). */
export function isSuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/**
 * When the next attempt is due after `response` (ms since the epoch), or `null` for none; asked
 * once, after the answer and before the attempt is recorded (the delivery worker's retry schedule).
 */
export type NextAttempt = (response: WebhookResponse) => number | null;

/**
 * Signs `event` for `endpoint` now, sends it, and records the attempt (`dlv_` id, `createdAt` the
 * time it was sent, `nextAttemptAt` from `nextAttempt`, default none) in the endpoint's deliveries
 * log. Never throws for the receiver's failure; throws only when storage fails to record.
 */
export async function attemptDelivery(
  context: AttemptContext,
  scope: WorkspaceScope,
  endpoint: WebhookEndpointRecord,
  event: Pick<DomainEvent, 'id' | 'type' | 'occurredAt' | 'data'>,
  attempt: number,
  trigger: DeliveryTrigger,
  signal?: AbortSignal,
  nextAttempt?: NextAttempt,
): Promise<AttemptOutcome> {
  const now = context.clock.now();
  const signed = signWebhook(endpoint, event, now);
  const response = await context.transport.send(
    { url: endpoint.url, headers: signed.headers, body: signed.body },
    signal,
  );
  const entry: DeliveryAttempt = {
    id: context.ids.next('dlv'),
    endpointId: endpoint.id,
    eventId: event.id,
    eventType: event.type,
    attempt,
    trigger,
    status: response.status,
    durationMs: response.durationMs,
    error: response.error,
    responseBody: response.responseBody,
    nextAttemptAt: isoOrNull(nextAttempt?.(response) ?? null),
    createdAt: new Date(now).toISOString(),
  };
  await context.storage.deliveries.record(scope, entry);
  return { entry, response };
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
