/** @module Webhook endpoints in memory: a deleted endpoint takes its delivery attempts with it. */
import { frozenCopy, subscribesTo, type WebhookEndpointStore } from '@parley/core/adapter';
import { applyChange, meets, versioned } from '../memory-changes.js';
import { found, type StoreContext } from './context.js';

/** `storage.webhookEndpoints` in memory. */
export function webhookEndpointStore({ workspaceOf, deliveryLog }: StoreContext): WebhookEndpointStore {
  return {
    insert: async ({ workspaceId }, endpoint) => {
      workspaceOf(workspaceId).webhookEndpoints.set(versioned(frozenCopy(endpoint), 1));
    },
    get: async ({ workspaceId }, id) => found(workspaceOf(workspaceId).webhookEndpoints.get(id)),
    list: async ({ workspaceId }, page) => workspaceOf(workspaceId).webhookEndpoints.newestFirst(page),
    subscribed: async ({ workspaceId }, type) =>
      [...workspaceOf(workspaceId).webhookEndpoints.values()].filter(
        (endpoint) => endpoint.enabled && subscribesTo(endpoint.events, type),
      ),
    // Endpoints emit no events: a change's `event` is ignored (ports/storage.ts).
    update: async ({ workspaceId }, id, change) => applyChange(workspaceOf(workspaceId).webhookEndpoints, id, change),
    delete: async ({ workspaceId }, id, options = {}) => {
      const endpoints = workspaceOf(workspaceId).webhookEndpoints;
      const stored = endpoints.get(id);
      if (!stored) return null;
      if (!meets(stored, options)) return { outcome: 'unmet', record: stored };
      endpoints.delete(id);
      deliveryLog.remove(workspaceId, id);
      return { outcome: 'applied', record: stored };
    },
  };
}
