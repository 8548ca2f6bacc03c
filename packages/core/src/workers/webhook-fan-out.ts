/** @module The outbox's webhook consumer: one delivery job per subscribed endpoint of each recorded event. */
import { randomUUID } from 'node:crypto';
import type { DeliveryJob, DeliveryQueue } from '../ports/delivery-queue.js';
import type { OutboxBatch, Storage } from '../ports/storage.js';
import type { EventType, WebhookEndpointRecord } from '../types.js';
import type { OutboxConsumer } from './outbox-relay.js';

/**
 * Fans each event of a batch out: one `first`-lane job (attempt 1, trigger `scheduled`) per enabled
 * endpoint of the workspace subscribed to its type at this moment. Resolves with the number of jobs
 * enqueued. If it throws (storage or queue down) the relay leaves the batch unacknowledged and the
 * outbox hands it out again after its lease: an event may be enqueued twice, never lost.
 */
export class WebhookFanOut implements OutboxConsumer {
  readonly name = 'deliveries';

  constructor(
    private readonly storage: Storage,
    private readonly queue: DeliveryQueue,
  ) {}

  async consume(batch: OutboxBatch): Promise<number> {
    const endpointsOf = new Map<EventType, Promise<WebhookEndpointRecord[]>>();
    const jobs: DeliveryJob[] = [];
    for (const event of batch.events) {
      let endpoints = endpointsOf.get(event.type);
      if (!endpoints)
        endpointsOf.set(
          event.type,
          (endpoints = this.storage.webhookEndpoints.subscribed({ workspaceId: batch.workspaceId }, event.type)),
        );
      // Each attempt joins the trace the event was recorded in (docs/observability.md#traces).
      const traceContext = batch.traceContexts?.[event.id];
      for (const endpoint of await endpoints) {
        jobs.push({
          id: randomUUID(),
          workspaceId: batch.workspaceId,
          endpointId: endpoint.id,
          event,
          attempt: 1,
          trigger: 'scheduled',
          ...(traceContext !== undefined && { traceContext }),
        });
      }
    }
    if (jobs.length > 0) await this.queue.enqueue(jobs);
    return jobs.length;
  }
}
