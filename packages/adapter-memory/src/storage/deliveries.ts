/** @module Delivery attempts in memory (memory-deliveries.ts holds them): only for an endpoint still there. */
import type { DeliveryStore } from '@parley/core/adapter';
import type { StoreContext } from './context.js';

/** `storage.deliveries` in memory. */
export function deliveryStore({ workspaceOf, deliveryLog }: StoreContext): DeliveryStore {
  return {
    record: async ({ workspaceId }, attempt) => {
      if (!workspaceOf(workspaceId).webhookEndpoints.has(attempt.endpointId)) return;
      deliveryLog.record(workspaceId, attempt);
    },
    get: async ({ workspaceId }, endpointId, id) => deliveryLog.get(workspaceId, endpointId, id),
    list: async ({ workspaceId }, endpointId, query) => deliveryLog.list(workspaceId, endpointId, query),
    delivered: async ({ workspaceId }, endpointId, eventIds) =>
      deliveryLog.delivered(workspaceId, endpointId, eventIds),
  };
}
