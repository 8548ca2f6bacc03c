/**
 * @module Operator actions on webhook delivery (README "Receiving webhooks"): the deliveries log,
 * manual retry, recover, test events and secret rotation.
 */
import { randomUUID } from 'node:crypto';
import { inject, injectable } from '../di.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { DeliveryJob, DeliveryQueue } from '../ports/delivery-queue.js';
import type { IdGenerator } from '../ports/ids.js';
import type { Storage } from '../ports/storage.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';
import {
  DeliveryListQuerySchema,
  RecoverSchema,
  RotateSecretSchema,
  WebhookTestSchema,
  type DeliveryListQuery,
  type RecoverInput,
  type RotateSecretInput,
  type WebhookTestInput,
} from '../schemas/delivery.js';
import { generateWebhookSecret } from '../services/webhook-service.js';
import { TOKENS } from '../tokens.js';
import { subscribesTo, type DeliveryAttempt, type WebhookEndpointRecord } from '../types.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../services/cursor.js';
import { parse } from '../validation.js';
import { attemptDelivery } from './attempt.js';
import { exampleEventData } from './example-events.js';
import { livePreviousSecrets } from './signing.js';
import type { WorkspaceScope } from '../ports/scope.js';
import { activeTraceContext } from '../tracing/trace-context.js';

/** Secrets replaced by rotations that may sign beside the current one: three sign at most. */
const MAX_PREVIOUS_SECRETS = 2;
/** How long a rotated-out secret keeps signing deliveries, in ms (24 h). */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * How far past `until` `recover` keeps reading the log: events are listed in commit order, and an
 * event is stamped just before its write commits, so one stamped inside the window can follow one
 * stamped after it; none commits minutes late.
 */
const RECOVER_SLACK_MS = 5 * 60 * 1000;
const RECOVER_PAGE = 100;

/** An attempt as the API shows it: the endpoint is the one in the path, so `endpointId` is left out. */
export type DeliveryLogEntry = Omit<DeliveryAttempt, 'endpointId'>;

/** The API shape of a logged attempt. */
export function toDeliveryLogEntry({ endpointId: _endpointId, ...entry }: DeliveryAttempt): DeliveryLogEntry {
  // Entries recorded before `nextAttemptAt` existed read as having none.
  if (entry.nextAttemptAt === undefined) return { ...entry, nextAttemptAt: null };
  return entry;
}

/** A page of the deliveries log. */
export interface DeliveryList {
  deliveries: DeliveryLogEntry[];
  hasMore: boolean;
  nextCursor?: string;
}

/**
 * Operator actions on an endpoint's deliveries. Every method answers `not_found` for an endpoint
 * that is not the workspace's. Jobs go to the delivery queue's `first` lane, so a worker makes them
 * right away; `test` is sent by the service itself, synchronously.
 */
@injectable()
export class DeliveryService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.deliveryQueue) private readonly queue: DeliveryQueue,
    @inject(TOKENS.webhookTransport) private readonly transport: WebhookTransport,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
  ) {}

  /**
   * The endpoint's attempts, newest first (`limit` 1–100, default 50), older than the cursor
   * `before`, only those of `eventId` when given.
   * @throws ParleyError `validation_failed`, `invalid_request` (bad cursor), `not_found`
   */
  async list(scope: WorkspaceScope, endpointId: string, query: DeliveryListQuery = {}): Promise<DeliveryList> {
    const { limit, before, eventId } = parse(DeliveryListQuerySchema, query);
    await this.endpoint(scope, endpointId);
    const beforeId = before === undefined ? undefined : decodeCursor(endpointId, before);
    const page = await this.storage.deliveries.list(scope, endpointId, {
      limit,
      ...(beforeId !== undefined && { before: beforeId }),
      ...(eventId !== undefined && { eventId }),
    });
    if (!page) throw invalidCursor();
    const last = page.deliveries.at(-1);
    return {
      deliveries: page.deliveries.map(toDeliveryLogEntry),
      hasMore: page.hasMore,
      ...(page.hasMore && last && { nextCursor: encodeCursor(endpointId, last.id) }),
    };
  }

  /**
   * Queues one new attempt (trigger `manual`, no retries of its own) of the event of the logged
   * attempt `deliveryId`, to be made now.
   * @throws ParleyError `not_found` (endpoint, attempt, or its event no longer retained), `conflict` (endpoint disabled)
   */
  async retry(
    scope: WorkspaceScope,
    endpointId: string,
    deliveryId: string,
  ): Promise<{ eventId: string; queued: true }> {
    const endpoint = await this.endpoint(scope, endpointId);
    const attempt = await this.storage.deliveries.get(scope, endpointId, deliveryId);
    if (!attempt) throw ParleyError.notFound('delivery', deliveryId);
    this.requireEnabled(endpoint);
    const event = await this.storage.events.get(scope, attempt.eventId);
    if (!event)
      throw new ParleyError(
        ErrorCode.notFound,
        `The event '${attempt.eventId}' of this delivery is no longer retained (or was a test event).`,
      );
    // The attempt joins the operator's request's trace (docs/observability.md#traces).
    const traceContext = activeTraceContext();
    await this.queue.enqueue([
      {
        id: randomUUID(),
        workspaceId: scope.workspaceId,
        endpointId,
        event,
        attempt: 1,
        trigger: 'manual',
        ...(traceContext !== undefined && { traceContext }),
      },
    ]);
    return { eventId: event.id, queued: true };
  }

  /**
   * Queues (trigger `recover`, retried on schedule) every retained event stamped in
   * [`since`, `until`] (until defaults to now) whose type the endpoint subscribes to and that the
   * endpoint has not answered with a 2xx yet. Resolves with how many. Reads the retained log
   * from its oldest event, so its cost grows with the retention, not with the window.
   * @throws ParleyError `validation_failed`, `not_found`, `conflict` (endpoint disabled: enable it first)
   */
  async recover(scope: WorkspaceScope, endpointId: string, input: RecoverInput): Promise<{ events: number }> {
    const { since, until } = parse(RecoverSchema, input);
    const endpoint = await this.endpoint(scope, endpointId);
    this.requireEnabled(endpoint);
    const from = Date.parse(since);
    const to = until === undefined ? this.clock.now() : Date.parse(until);
    let after: string | undefined;
    let queued = 0;
    const traceContext = activeTraceContext();
    for (;;) {
      const page = await this.storage.events.list(scope, {
        limit: RECOVER_PAGE,
        ...(after !== undefined && { after }),
      });
      if (!page || page.events.length === 0) break;
      const candidates = page.events.filter((event) => {
        const at = Date.parse(event.occurredAt);
        return at >= from && at <= to && subscribesTo(endpoint.events, event.type);
      });
      if (candidates.length > 0) {
        const delivered = await this.storage.deliveries.delivered(
          scope,
          endpointId,
          candidates.map((event) => event.id),
        );
        const jobs: DeliveryJob[] = candidates
          .filter((event) => !delivered.has(event.id))
          .map((event) => ({
            id: randomUUID(),
            workspaceId: scope.workspaceId,
            endpointId,
            event,
            attempt: 1,
            trigger: 'recover',
            ...(traceContext !== undefined && { traceContext }),
          }));
        if (jobs.length > 0) await this.queue.enqueue(jobs);
        queued += jobs.length;
      }
      const last = page.events.at(-1)!;
      if (!page.hasMore || Date.parse(last.occurredAt) > to + RECOVER_SLACK_MS) break;
      after = last.id;
    }
    return { events: queued };
  }

  /**
   * Sends an example event of `eventType` to the endpoint now (even when it is disabled), signed
   * like any delivery, with a `webhook-id` starting `evt_test_`, and logs it (trigger `test`).
   * Resolves with the log entry once the receiver answered or the attempt failed (at most 15 s).
   * The endpoint's state (`failingSince`, `enabled`) is not changed by a test.
   * @throws ParleyError `validation_failed`, `not_found`
   */
  async test(scope: WorkspaceScope, endpointId: string, input: WebhookTestInput): Promise<DeliveryLogEntry> {
    const { eventType } = parse(WebhookTestSchema, input);
    const endpoint = await this.endpoint(scope, endpointId);
    const at = new Date(this.clock.now()).toISOString();
    const id = this.ids.next('evt').replace(/^evt_/, 'evt_test_');
    const event = { id, type: eventType, occurredAt: at, data: exampleEventData(eventType, at) };
    const { entry } = await attemptDelivery(
      { storage: this.storage, transport: this.transport, clock: this.clock, ids: this.ids },
      scope,
      endpoint,
      event,
      1,
      'test',
    );
    return toDeliveryLogEntry(entry);
  }

  /**
   * Replaces the signing secret with `secret` (or a generated `whsec_` one). The replaced secret
   * keeps signing for 24 h (`previousSecretExpiresAt`), beside the new one (`v1,<new> v1,<old>`).
   * A second rotation inside that overlap keeps the first replaced secret until its own expiry, so
   * at most three secrets sign at once; a third drops the one that expires first. The write applies
   * only while the stored secret is still the one read (one atomic step, ports/storage.ts `Change`),
   * so a concurrent rotation or secret change is never lost: the later of two answers 409.
   * Resolves with the new secret and when the one it replaced stops signing (ISO 8601).
   * @throws ParleyError `validation_failed`, `not_found`, `conflict` (the secret changed meanwhile)
   */
  async rotateSecret(
    scope: WorkspaceScope,
    endpointId: string,
    input: RotateSecretInput = {},
  ): Promise<{ secret: string; previousSecretExpiresAt: string }> {
    const fields = parse(RotateSecretSchema, input);
    const secret = fields.secret ?? generateWebhookSecret();
    const current = await this.endpoint(scope, endpointId);
    const now = this.clock.now();
    const previousSecretExpiresAt = new Date(now + SECRET_OVERLAP_MS).toISOString();
    const result = await this.storage.webhookEndpoints.update(scope, endpointId, {
      set: {
        secret,
        previousSecrets: [
          { secret: current.secret, expiresAt: previousSecretExpiresAt },
          ...livePreviousSecrets(current, now),
        ].slice(0, MAX_PREVIOUS_SECRETS),
      },
      touch: new Date(now).toISOString(),
      where: [{ field: 'secret', equals: current.secret }],
    });
    if (!result) throw ParleyError.notFound('webhook endpoint', endpointId);
    if (result.outcome === 'unmet')
      throw new ParleyError(
        ErrorCode.conflict,
        'The signing secret was changed by a concurrent request; rotate it again.',
      );
    return { secret, previousSecretExpiresAt };
  }

  private requireEnabled(endpoint: WebhookEndpointRecord): void {
    if (!endpoint.enabled)
      throw new ParleyError(
        ErrorCode.conflict,
        'The webhook endpoint is disabled; enable it (PATCH {"enabled": true}) first.',
      );
  }

  private async endpoint(scope: WorkspaceScope, id: string): Promise<WebhookEndpointRecord> {
    const record = await this.storage.webhookEndpoints.get(scope, id);
    if (!record) throw ParleyError.notFound('webhook endpoint', id);
    return record;
  }
}
