/** @module Webhook endpoints on Redis: a HASH of records (secrets included) and an index. */
import type { EventType, PageResult } from '@parley/core';
import {
  subscribesTo,
  type WorkspaceScope,
  type Change,
  type DeleteOptions,
  type OffsetPage,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
  type WriteResult,
} from '@parley/core/adapter';
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
export function webhookEndpointStore(log: EventLog): WebhookEndpointStore {
  const { runner } = log;
  const keysOf = (workspaceId: string) => workspaceKeys(runner.prefix, workspaceId);

  return {
    async insert(scope: WorkspaceScope, endpoint: WebhookEndpointRecord): Promise<void> {
      const keys = keysOf(scope.workspaceId);
      await log.write(RECORD_INSERT, scope, {
        keys: { hash: keys.webhook, indexes: [keys.webhooks] },
        args: { id: endpoint.id, stored: encodeRecord(endpoint) },
      });
    },

    async get(scope: WorkspaceScope, id: string): Promise<WebhookEndpointRecord | null> {
      const raw = await runner.hget(keysOf(scope.workspaceId).webhook, id, scope);
      return raw === null ? null : decodeRecord<WebhookEndpointRecord>(raw);
    },

    async list(scope: WorkspaceScope, { offset, limit }: OffsetPage): Promise<PageResult<WebhookEndpointRecord>> {
      const keys = keysOf(scope.workspaceId);
      return pageOf<WebhookEndpointRecord>(
        await runner.script(
          PAGE,
          { keys: { index: keys.webhooks, hash: keys.webhook }, args: { offset, limit } },
          scope,
        ),
      );
    },

    async subscribed({ workspaceId }: WorkspaceScope, type: EventType): Promise<WebhookEndpointRecord[]> {
      const rows = await runner.run((client) => client.hvals(keysOf(workspaceId).webhook));
      return rows
        .map((row) => decodeRecord<WebhookEndpointRecord>(row))
        .filter((endpoint) => endpoint.enabled && subscribesTo(endpoint.events, type));
    },

    /** One script (records.lua.ts `RECORD_UPDATE`); endpoints emit no events, so a change's `event` is ignored. */
    async update(
      scope: WorkspaceScope,
      id: string,
      change: Change<WebhookEndpointRecord>,
    ): Promise<WriteResult<WebhookEndpointRecord> | null> {
      const keys = keysOf(scope.workspaceId);
      return writeResult(
        await log.write(RECORD_UPDATE, scope, {
          keys: { hash: keys.webhook, leave: [], join: [] },
          args: { id, ...changeArgs(change) },
        }),
      );
    },

    /** Deletes the endpoint, its index entry and its deliveries log in one script, if `conditions` hold. */
    async delete(
      scope: WorkspaceScope,
      id: string,
      conditions: Omit<DeleteOptions, 'event'> = {},
    ): Promise<WriteResult<WebhookEndpointRecord> | null> {
      const keys = keysOf(scope.workspaceId);
      const reply = await log.write(RECORD_REMOVE, scope, {
        keys: {
          hash: keys.webhook,
          indexes: [keys.webhooks],
          purge: [keys.delivery(id), keys.deliveries(id), keys.delivered(id)],
        },
        args: { id, ...conditionArgs(conditions) },
      });
      return writeResult(reply);
    },
  };
}
