/** @module Webhook endpoints on Redis: a HASH of records (secrets included) and an index. */
import type { OffsetPage, PageResult, WebhookEndpointRecord, WebhookEndpointStore } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys } from '../keys.js';
import { INSERT, PAGE, REMOVE, REPLACE } from '../scripts/records.js';
import { pageReply } from '../scripts/script.js';

/** {@link WebhookEndpointStore} on Redis: every method is one round trip (a command or script). */
export class RedisWebhookEndpointStore implements WebhookEndpointStore {
  constructor(private readonly runner: RedisRunner) {}

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async insert(workspaceId: string, endpoint: WebhookEndpointRecord): Promise<void> {
    const keys = this.keys(workspaceId);
    await this.runner.script(INSERT, [keys.webhook, keys.webhooks], [endpoint.id, JSON.stringify(endpoint)]);
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpointRecord | null> {
    const raw = await this.runner.run((client) => client.hget(this.keys(workspaceId).webhook, id));
    return raw === null ? null : (JSON.parse(raw) as WebhookEndpointRecord);
  }

  async list(workspaceId: string, { offset, limit }: OffsetPage): Promise<PageResult<WebhookEndpointRecord>> {
    const keys = this.keys(workspaceId);
    return pageReply<WebhookEndpointRecord>(await this.runner.script(PAGE, [keys.webhooks, keys.webhook], [offset, limit]));
  }

  async replace(workspaceId: string, endpoint: WebhookEndpointRecord): Promise<boolean> {
    const keys = this.keys(workspaceId);
    return (await this.runner.script(REPLACE, [keys.webhook], [endpoint.id, JSON.stringify(endpoint), 0])) === 1;
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const keys = this.keys(workspaceId);
    return (await this.runner.script(REMOVE, [keys.webhook, keys.webhooks], [id])) !== null;
  }
}
