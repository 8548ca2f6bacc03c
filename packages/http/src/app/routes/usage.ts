/** @module `/usage`: token totals of the workspace's replies (docs/replies-and-streams.md#usage). */
import { UsageQuerySchema, UsageReportSchema, type Core } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { endpoints } from './endpoint.js';
import { json } from '../response.js';

/** The usage route, to be mounted at `/api/usage` behind authentication (scope `agents:read`). */
export function usageRoutes(core: Core): Hono<ParleyEnv> {
  const endpoint = endpoints();
  return new Hono<ParleyEnv>().get(
    '/',
    ...endpoint(
      {
        operationId: 'getUsage',
        summary: 'Token usage totals',
        description:
          "Input and output tokens of the workspace's stored reply steps (each assistant message's `metadata.reply.usage`) from UTC day `from` to `to` (both included, at most 366 days; default the last 30 days; each a date or an ISO 8601 timestamp, which stands for the UTC day containing it), grouped by `agent`, `model`, `user` or `day`. Read from counters kept with each stored message, so its cost does not grow with the history.",
        tag: 'Agents',
        scope: 'agents:read',
        query: UsageQuerySchema,
        success: {
          status: 200,
          description: 'The totals, one per group with any usage, and their sum.',
          schema: UsageReportSchema,
        },
      },
      async ({ scope, query }, c) => json(c, await core.usage.totals(scope, query)),
    ),
  );
}
