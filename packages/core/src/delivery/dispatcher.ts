/** @module The outbox relay: hands each recorded event to the delivery queue, one job per subscribed endpoint. */
import { randomUUID } from 'node:crypto';
import type { DeliveryJob, DeliveryQueue } from '../ports/delivery-queue.js';
import type { OutboxBatch, Storage } from '../ports/storage.js';
import type { EventType, WebhookEndpointRecord } from '../types.js';

/**
 * Fans one outbox batch out: for each event, one `first`-lane job (attempt 1, trigger
 * `scheduled`) per enabled endpoint of the workspace subscribed to its type at this moment, then
 * acknowledges the batch. Resolves with the number of jobs enqueued. If it throws (storage or
 * queue down) the batch stays unacknowledged and the outbox hands it out again after its lease:
 * at-least-once, so an event may be enqueued twice, never lost.
 */
export async function dispatchBatch(
  storage: Storage,
  queue: DeliveryQueue,
  batch: OutboxBatch,
  // Other consumers of the log (automatic agent replies) run before the ack too: at-least-once alike.
  alsoBeforeAck?: (batch: OutboxBatch) => Promise<unknown>,
): Promise<number> {
  const endpointsOf = new Map<EventType, Promise<WebhookEndpointRecord[]>>();
  const jobs: DeliveryJob[] = [];
  for (const event of batch.events) {
    let endpoints = endpointsOf.get(event.type);
    if (!endpoints) endpointsOf.set(event.type, (endpoints = storage.webhookEndpoints.subscribed(batch.workspaceId, event.type)));
    for (const endpoint of await endpoints) {
      jobs.push({ id: randomUUID(), workspaceId: batch.workspaceId, endpointId: endpoint.id, event, attempt: 1, trigger: 'scheduled' });
    }
  }
  if (jobs.length > 0) await queue.enqueue(jobs);
  await alsoBeforeAck?.(batch);
  await storage.outbox.ack(batch);
  return jobs.length;
}
