/** @module Webhook endpoints on Redis: a HASH of records (secrets included) and an index. */
import { ErrorCode, ParleyError, subscribesTo, type EventType, type OffsetPage, type PageResult, type Update, type WebhookEndpointRecord, type WebhookEndpointStore } from '@parley/core';
import { workspaceKeys } from '../keys.js';
import { pageReply } from '../script.js';
import type { EventLog } from './event-log.js';
import { PAGE, RECORD_INSERT, RECORD_REMOVE, RECORD_UPDATE } from './records.lua.js';
import { compareAndSet, UPDATE_ATTEMPTS, type CasOutcome } from './update.js';

/**
 * {@link WebhookEndpointStore} on Redis: every method is one round trip (a command or script),
 * except `update`, a compare-and-set (a read, then a script; again after a lost race).
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
    const recording = this.log.params(workspaceId, keys, undefined);
    await this.runner.script(RECORD_INSERT, {
      keys: { hash: keys.webhook, indexes: [keys.webhooks], ...recording.keys },
      args: { id: endpoint.id, json: JSON.stringify(endpoint), ...recording.args },
    });
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpointRecord | null> {
    const raw = await this.runner.run((client) => client.hget(this.keys(workspaceId).webhook, id));
    return raw === null ? null : (JSON.parse(raw) as WebhookEndpointRecord);
  }

  async list(workspaceId: string, { offset, limit }: OffsetPage): Promise<PageResult<WebhookEndpointRecord>> {
    const keys = this.keys(workspaceId);
    return pageReply<WebhookEndpointRecord>(await this.runner.script(PAGE, { keys: { index: keys.webhooks, hash: keys.webhook }, args: { offset, limit } }));
  }

  async subscribed(workspaceId: string, type: EventType): Promise<WebhookEndpointRecord[]> {
    const rows = await this.runner.run((client) => client.hvals(this.keys(workspaceId).webhook));
    return rows.map((row) => JSON.parse(row) as WebhookEndpointRecord).filter((endpoint) => endpoint.enabled && subscribesTo(endpoint.events, type));
  }

  /** Compare-and-set on the stored JSON (see update.ts); a change's event is ignored. */
  async update(workspaceId: string, id: string, update: Update<WebhookEndpointRecord>): Promise<WebhookEndpointRecord | null> {
    const keys = this.keys(workspaceId);
    const recording = this.log.params(workspaceId, keys, undefined);
    return compareAndSet(
      () => this.runner.run((client) => client.hget(keys.webhook, id)),
      update,
      async (_current, { record }, raw) =>
        (await this.runner.script(RECORD_UPDATE, {
          keys: { hash: keys.webhook, leave: [], join: [], ...recording.keys },
          args: { id, expected: raw, json: JSON.stringify(record), ...recording.args },
        })) as CasOutcome,
    );
  }

  /**
   * Deletes the endpoint, its index entry and its deliveries log in one script. With `check`, a
   * compare-and-set: the record is read, checked, and removed only while it is still that JSON
   * (read again after a lost race).
   */
  async delete(workspaceId: string, id: string, check?: (current: WebhookEndpointRecord) => void): Promise<boolean> {
    const keys = this.keys(workspaceId);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
      let expected = '';
      if (check) {
        const raw = await this.runner.run((client) => client.hget(keys.webhook, id));
        if (raw === null) return false;
        check(JSON.parse(raw) as WebhookEndpointRecord);
        expected = raw;
      }
      const reply = await this.runner.script(RECORD_REMOVE, {
        keys: { hash: keys.webhook, indexes: [keys.webhooks], purge: [keys.delivery(id), keys.deliveries(id), keys.deliveriesAt(id), keys.delivered(id)] },
        args: { id, expected },
      });
      if (!Array.isArray(reply)) return reply !== null;
    }
    throw new ParleyError(ErrorCode.serviceUnavailable, 'The record kept changing during the delete; try again.');
  }
}
