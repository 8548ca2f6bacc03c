/** @module `/events`: the workspace's event log, oldest first (README "Events API"). */
import { EventListQuerySchema, EventListSchema, EventSchema, type Core } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { endpoints, type BodyReader } from './endpoint.js';
import { json } from '../response.js';

const byId = idPath('event', 'evt_');

/** Event log routes, to be mounted at `/api/events` behind authentication (scope `events:read`). */
export function eventRoutes(core: Core): Hono<ParleyEnv> {
  const endpoint = endpoints();
  return new Hono<ParleyEnv>()
    .get(
      '/',
      ...endpoint(
        {
          operationId: 'listEvents',
          summary: 'List events',
          description:
            'Retained events (default 14 days) in the order they were recorded, after the cursor `after` (from the oldest without it), only those of `type` when given. Follow `nextCursor` to read on; a reader never misses an event.',
          tag: 'Events',
          scope: 'events:read',
          query: EventListQuerySchema,
          success: { status: 200, description: 'A page of events.', schema: EventListSchema },
        },
        async ({ scope, query }, c) => {
          return json(c, await core.events.list(scope, query));
        },
      ),
    )
    .get(
      '/:id',
      ...endpoint(
        {
          operationId: 'getEvent',
          summary: 'Get an event',
          tag: 'Events',
          scope: 'events:read',
          path: byId,
          success: { status: 200, description: 'The event.', schema: EventSchema },
          errors: { 404: "No retained event with this id in the key's workspace." },
        },
        async ({ scope, params }, c) => {
          return json(c, await core.events.get(scope, params.id));
        },
      ),
    );
}
