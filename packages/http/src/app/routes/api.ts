/** @module The `/api` router: authentication, then every resource's routes, then 405/404. */
import type { Core } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { agentRoutes } from './agents.js';
import { chatRoutes } from './chat.js';
import { conversationRoutes } from './conversations.js';
import { replyRoutes, type ReplyRoutesOptions } from './replies.js';
import { toolResultRoutes } from './tool-results.js';
import { usageRoutes } from './usage.js';
import { keyRoutes } from './key.js';
import { deliveryRoutes } from './deliveries.js';
import { eventRoutes } from './events.js';
import { answerUnmatched } from './fallback.js';
import { webhookRoutes } from './webhooks.js';

/** Options of {@link apiRoutes}. */
export interface ApiRoutesOptions {
  /**
   * Middleware every `/api` request passes first, in order: authentication (401), then rate
   * limiting (429). Each route then checks its scope (403) and reads its body (413/415/400).
   */
  guard: MiddlewareHandler<ParleyEnv>[];
  /** The JSON body reader routes with a body use. */
  body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>;
  /** Options of the reply and stream routes (keep-alive interval). */
  replies?: ReplyRoutesOptions;
}

/** The service API of docs/api.md#routes and docs/api.md#resources, to be mounted at `/api`. */
export function apiRoutes(core: Core, options: ApiRoutesOptions): Hono<ParleyEnv> {
  const api = new Hono<ParleyEnv>();
  api.use('*', ...options.guard);
  api.route('/agents', agentRoutes(core, options.body));
  api.route('/conversations', conversationRoutes(core, options.body));
  api.route('/conversations', replyRoutes(core, options.replies));
  api.route('/conversations', toolResultRoutes(core, options.body));
  api.route('/webhooks', webhookRoutes(core, options.body));
  api.route('/webhooks', deliveryRoutes(core, options.body));
  api.route('/events', eventRoutes(core));
  api.route('/usage', usageRoutes(core));
  api.route('/chat', chatRoutes(core, options.body, options.replies));
  api.route('/key', keyRoutes());
  return answerUnmatched(api);
}
