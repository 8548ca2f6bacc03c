/** @module Webhook endpoints on Redis: a HASH of records (secrets included) and an index. */
import { subscribesTo, type Admission, type Change, type DeleteConditions, type EventType, type OffsetPage, type PageResult, type WebhookEndpointRecord, type WebhookEndpointStore, type WriteResult } from '@parley/core';
import { workspaceKeys } from '../keys.js';
import type { EventLog } from './event-log.js';
import { changeArgs, conditionArgs, decodeRecord, encodeRecord } from './record-format.js';
import { pageOf, writeResult } from './record-replies.js';
import { PAGE, RECORD_INSERT, RECORD_REMOVE, RECORD_UPDATE } from './records.lua.js';

/**
 * {@link WebhookEndpointStore} on Redis: every method is one round trip (a command or script).
 * `subscribed` reads the workspace's endpoints (HVALS) and filters them: O(endpoints of the
 * workspace), which stay few; an index per event type would cost every write more than it saves.
 */
export class RedisWebhookEndpointStore implements WebhookEndpointStore {
  constructor(private readonly log: EventLog) {}

  private get runner() {
    return this.log.runner;
  }

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async insert(workspaceId: string, endpoint: WebhookEndpointRecord): Promise<void> {
    const keys = this.keys(workspaceId);
    await this.log.write(RECORD_INSERT, workspaceId, { keys: { hash: keys.webhook, indexes: [keys.webhooks] }, args: { id: endpoint.id, stored: encodeRecord(endpoint) } });
  }

  async get(workspaceId: string, id: string, admission?: Admission): Promise<WebhookEndpointRecord | null> {
    const raw = await this.runner.hget(this.keys(workspaceId).webhook, id, admission);
    return raw === null ? null : decodeRecord<WebhookEndpointRecord>(raw);
  }

  async list(workspaceId: string, { offset, limit }: OffsetPage, admission?: Admission): Promise<PageResult<WebhookEndpointRecord>> {
    const keys = this.keys(workspaceId);
    return pageOf<WebhookEndpointRecord>(await this.runner.script(PAGE, { keys: { index: keys.webhooks, hash: keys.webhook }, args: { offset, limit } }, admission));
  }

  async subscribed(workspaceId: string, type: EventType): Promise<WebhookEndpointRecord[]> {
    const rows = await this.runner.run((client) => client.hvals(this.keys(workspaceId).webhook));
    return rows.map((row) => decodeRecord<WebhookEndpointRecord>(row)).filter((endpoint) => endpoint.enabled && subscribesTo(endpoint.events, type));
  }

  /** One script (records.lua.ts `RECORD_UPDATE`); endpoints emit no events, so a change's `event` is ignored. */
  async update(workspaceId: string, id: string, change: Change<WebhookEndpointRecord>): Promise<WriteResult<WebhookEndpointRecord> | null> {
    const keys = this.keys(workspaceId);
    return writeResult(await this.log.write(RECORD_UPDATE, workspaceId, { keys: { hash: keys.webhook, leave: [], join: [] }, args: { id, ...changeArgs(change) } }));
  }

  /** Deletes the endpoint, its index entry and its deliveries log in one script, if `conditions` hold. */
  async delete(workspaceId: string, id: string, conditions: DeleteConditions = {}, admission?: Admission): Promise<WriteResult<WebhookEndpointRecord> | null> {
    const keys = this.keys(workspaceId);
    const reply = await this.log.write(RECORD_REMOVE, workspaceId, {
      keys: { hash: keys.webhook, indexes: [keys.webhooks], purge: [keys.delivery(id), keys.deliveries(id), keys.delivered(id)] },
      args: { id, ...conditionArgs(conditions) },
    }, undefined, admission);
    return writeResult(reply);
  }
}
