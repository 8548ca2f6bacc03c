/** @module Webhook endpoint registration (docs/api.md#routes, docs/api.md#resources, docs/events-and-webhooks.md). Delivery is separate. */
import { randomBytes } from 'node:crypto';
import { inject, injectable } from '../di.js';
import { ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import type { WorkspaceScope } from '../ports/scope.js';
import type { Storage } from '../ports/storage.js';
import {
  WebhookCreateSchema,
  WebhookListQuerySchema,
  WebhookUpdateSchema,
  type WebhookCreateInput,
  type WebhookListQuery,
  type WebhookUpdateInput,
} from '../schemas/webhook.js';
import { TOKENS } from '../tokens.js';
import type { WebhookEndpoint, WebhookEndpointRecord } from '../types.js';
import { parse, validationFailed } from '../validation.js';
import { recordVersion, withVersion } from '../record-version.js';
import { ifMatchVersions, preconditionFailed, versionMatches, type WriteConditions } from './entity-tag.js';
import { givenFields } from './patch.js';
import type { WebhookTargetPolicy } from './webhook-targets.js';
import { isoTimestamp } from './timestamp.js';

/** The registration response: the endpoint, plus `secret` only when Parley generated it. */
export type WebhookRegistration = WebhookEndpoint & { secret?: string };

/** A page of webhook endpoints. */
export interface WebhookList {
  webhooks: WebhookEndpoint[];
  total: number;
  page: number;
  limit: number;
}

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The API's view of a stored endpoint: secrets and delivery state left out; its version kept (`recordVersion`). */
export function toEndpoint(record: WebhookEndpointRecord): WebhookEndpoint {
  const { secret: _secret, previousSecrets: _previous, failingSince: _failing, ...endpoint } = record;
  return withVersion(endpoint, recordVersion(record));
}

/**
 * Webhook endpoints of a workspace. Responses never carry the stored secret, except the one
 * Parley generates at registration, returned once. A `url` must pass `targets` (no private or
 * loopback hosts unless allowed; see {@link WebhookTargetPolicy}) before anything is stored.
 * Every method takes the {@link WorkspaceScope} first, passed on to every port call.
 */
@injectable()
export class WebhookService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
    @inject(TOKENS.webhookTargets) private readonly targets: WebhookTargetPolicy,
  ) {
    // A replacement that does not pass the policy on fails at `createCore` (docs/architecture.md).
    if (!targets) throw new TypeError('WebhookService: expected its webhook target policy.');
  }

  /**
   * Registers an enabled endpoint. May wait up to 2 s for the URL's host name to resolve.
   * @throws ParleyError `validation_failed` (also for a refused target, at path `url`)
   */
  async create(scope: WorkspaceScope, input: WebhookCreateInput): Promise<WebhookRegistration> {
    const fields = parse(WebhookCreateSchema, input);
    await this.checkTarget(scope, fields.url);
    const now = isoTimestamp(this.clock.now());
    const secret = fields.secret ?? generateWebhookSecret();
    const record: WebhookEndpointRecord = {
      id: this.ids.next('wh'),
      url: fields.url,
      events: fields.events,
      enabled: true,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
      secret,
      previousSecrets: [],
      failingSince: null,
    };
    await this.storage.webhookEndpoints.insert(scope, withVersion(record, 1));
    return fields.secret === undefined ? { ...toEndpoint(record), secret } : toEndpoint(record);
  }

  /** @throws ParleyError `not_found` */
  async get(scope: WorkspaceScope, id: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.record(scope, id));
  }

  /** Newest first, page-numbered. */
  async list(scope: WorkspaceScope, query: WebhookListQuery = {}): Promise<WebhookList> {
    const { page, limit } = parse(WebhookListQuerySchema, query);
    const { items, total } = await this.storage.webhookEndpoints.list(scope, { offset: (page - 1) * limit, limit });
    return { webhooks: items.map(toEndpoint), total, page, limit };
  }

  /**
   * Changes `url`, `events`, `secret` and/or `enabled`. A new `url` is checked like at registration.
   * The store merges the given fields into the endpoint as stored, in one atomic step (ports/storage.ts
   * `Change`), so a PATCH never undoes a concurrent PATCH of other fields or the delivery worker
   * disabling the endpoint.
   * Setting `enabled` (either way) clears `disabledReason`; `enabled: true` also forgets the current
   * run of failures (`failingSince`), so a re-enabled endpoint gets 5 fresh days. A new `secret`
   * replaces the old one at once: no previous secret keeps signing (that is `rotate-secret`'s job).
   * An empty patch writes nothing. With `conditions.ifMatch`, nothing changes unless the
   * endpoint's {@link entityTag} (of its API view, {@link toEndpoint}) matches, decided in the
   * same step as the write.
   * @throws ParleyError `validation_failed`, `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async update(
    scope: WorkspaceScope,
    id: string,
    input: WebhookUpdateInput,
    conditions: WriteConditions = {},
  ): Promise<WebhookEndpoint> {
    const changes = givenFields(parse(WebhookUpdateSchema, input));
    // Before the lookup by id: a refused URL is a 400, which answers before a 404 (docs/errors.md).
    if (changes.url !== undefined) await this.checkTarget(scope, changes.url);
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    if (Object.keys(changes).length === 0) {
      const endpoint = await this.get(scope, id);
      if (!versionMatches(ifVersion, endpoint)) throw preconditionFailed(endpoint);
      return endpoint;
    }
    const set: Partial<WebhookEndpointRecord> = { ...changes };
    if (changes.enabled !== undefined) set.disabledReason = null;
    if (changes.enabled === true) set.failingSince = null;
    if (changes.secret !== undefined) set.previousSecrets = [];
    const result = await this.storage.webhookEndpoints.update(scope, id, {
      set,
      touch: isoTimestamp(this.clock.now()),
      ifVersion,
    });
    if (!result) throw ParleyError.notFound('webhook endpoint', id);
    if (result.outcome === 'unmet') throw preconditionFailed(toEndpoint(result.record));
    return toEndpoint(result.record);
  }

  /**
   * Deletes the endpoint and its deliveries log. With `conditions.ifMatch`, only while the
   * endpoint's {@link entityTag} matches, checked in the same atomic step as the removal.
   * @throws ParleyError `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async delete(scope: WorkspaceScope, id: string, conditions: WriteConditions = {}): Promise<void> {
    const result = await this.storage.webhookEndpoints.delete(scope, id, {
      ifVersion: ifMatchVersions(conditions.ifMatch, id),
    });
    if (!result) throw ParleyError.notFound('webhook endpoint', id);
    if (result.outcome === 'unmet') throw preconditionFailed(toEndpoint(result.record));
  }

  /** @throws ParleyError `validation_failed` at path `url` when the policy refuses the target. */
  private async checkTarget(scope: WorkspaceScope, url: string): Promise<void> {
    const refusal = await this.targets.refusal(scope, url);
    if (refusal !== null) throw validationFailed([{ path: 'url', message: refusal }]);
  }

  private async record(scope: WorkspaceScope, id: string): Promise<WebhookEndpointRecord> {
    const record = await this.storage.webhookEndpoints.get(scope, id);
    if (!record) throw ParleyError.notFound('webhook endpoint', id);
    return record;
  }
}
