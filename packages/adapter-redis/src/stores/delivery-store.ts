/** @module Each webhook endpoint's deliveries log on Redis (see delivery-store.lua.ts). */
import type { DeliveryAttempt, WorkspaceScope } from '@parley/core';
import { firstIdAt, isSuccess, type DeliveryPage, type DeliveryStore } from '@parley/core/adapter';
import { workspaceKeys } from '../keys.js';
import { records, strings } from '../script.js';
import { DELIVERY_PAGE, DELIVERY_RECORD, DELIVERY_TRIM_EVERY } from './delivery-store.lua.js';
import { ULID_DIGITS, type EventLog } from './event-log.js';
import { TurnBatcher } from '../turn-batcher.js';

/** Whether recording attempt `id` trims expired attempts: one id in {@link DELIVERY_TRIM_EVERY} by its last ULID character, every id without one. */
export function trimDue(id: string): boolean {
  const digit = ULID_DIGITS.indexOf(id.at(-1) ?? '');
  return digit < 0 || digit % DELIVERY_TRIM_EVERY === 0;
}

/** An attempt waiting for its turn's record script: its JSON, and its event's id when it was answered with a 2xx. */
interface RecordedAttempt {
  workspaceId: string;
  endpointId: string;
  id: string;
  json: string;
  delivered: string | undefined;
}

/**
 * {@link DeliveryStore} on Redis: every method is one round trip. Attempts are kept as long as
 * events (`eventRetentionMs`, counted from the time in the attempt's id, which is made when the
 * attempt is recorded): older ones are neither read nor listed, and trimmed in bounded steps by
 * later records. The log is deleted with its endpoint. The attempts of one endpoint recorded in
 * the same turn of the event loop (a worker's attempts that ended together) are written by one
 * script (`TurnBatcher`).
 */
export function deliveryStore(log: EventLog): DeliveryStore {
  const { runner } = log;
  const batches = new TurnBatcher<RecordedAttempt>(runner, write);

  /** Writes `records`, all of one endpoint, with one script. */
  async function write(records: RecordedAttempt[]): Promise<void> {
    const { workspaceId, endpointId } = records[0]!;
    const keys = workspaceKeys(runner.prefix, workspaceId);
    const retainedFrom = log.retainedFrom();
    await runner.script(DELIVERY_RECORD, {
      keys: {
        webhook: keys.webhook,
        delivery: keys.delivery(endpointId),
        deliveries: keys.deliveries(endpointId),
        delivered: keys.delivered(endpointId),
      },
      args: {
        endpointId,
        ids: records.map((record) => record.id),
        jsons: records.map((record) => record.json),
        eventIds: records.flatMap((record) => (record.delivered === undefined ? [] : [record.delivered])),
        now: log.options.clock.now(),
        retainedFrom,
        retainedBelow: firstIdAt('dlv', retainedFrom),
        trim: records.some((record) => trimDue(record.id)) ? '1' : '0',
      },
    });
  }

  return {
    async record({ workspaceId }: WorkspaceScope, attempt: DeliveryAttempt): Promise<void> {
      const { endpointId } = attempt;
      // Serialised now, not when the batch leaves: the caller may reuse the object meanwhile.
      const delivered = isSuccess(attempt.status) ? attempt.eventId : undefined;
      await batches.add(`${workspaceId}\n${endpointId}`, {
        workspaceId,
        endpointId,
        id: attempt.id,
        json: JSON.stringify(attempt),
        delivered,
      });
    },

    /** One HGET, unless the id's time says the attempt is past its retention. */
    async get({ workspaceId }: WorkspaceScope, endpointId: string, id: string): Promise<DeliveryAttempt | null> {
      if (log.isExpired(id)) return null;
      const key = workspaceKeys(runner.prefix, workspaceId).delivery(endpointId);
      const raw = await runner.run((client) => client.hget(key, id));
      return raw === null ? null : (JSON.parse(raw) as DeliveryAttempt);
    },

    async list(
      { workspaceId }: WorkspaceScope,
      endpointId: string,
      { before, limit, eventId }: { before?: string; limit: number; eventId?: string },
    ): Promise<DeliveryPage | null> {
      const keys = workspaceKeys(runner.prefix, workspaceId);
      const retainedFrom = log.retainedFrom();
      const reply = await runner.script(DELIVERY_PAGE, {
        keys: { delivery: keys.delivery(endpointId), deliveries: keys.deliveries(endpointId) },
        args: {
          hasBefore: before === undefined ? '0' : '1',
          before: before ?? '',
          limit,
          // The exact text JSON.stringify wrote for this field (escapes included).
          eventField: eventId === undefined ? '' : JSON.stringify({ eventId }).slice(1, -1),
          retainedFrom,
          retainedBelow: firstIdAt('dlv', retainedFrom),
        },
      });
      if (reply === null) return null;
      const [more, ...rows] = strings(reply);
      return { deliveries: records<DeliveryAttempt>(rows), hasMore: more === '1' };
    },

    /** One ZMSCORE on the endpoint's delivered events. */
    async delivered(
      { workspaceId }: WorkspaceScope,
      endpointId: string,
      eventIds: readonly string[],
    ): Promise<Set<string>> {
      if (eventIds.length === 0) return new Set();
      const key = workspaceKeys(runner.prefix, workspaceId).delivered(endpointId);
      const scores = await runner.run((client) => client.zmscore(key, ...eventIds));
      const from = log.retainedFrom();
      return new Set(eventIds.filter((_, i) => scores[i] !== null && Number(scores[i]) >= from));
    },
  };
}
