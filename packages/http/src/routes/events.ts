/** @module `/events`: the workspace's event log, oldest first (README "Events API"). */
import { EventListQuerySchema, EventListSchema, EventSchema, type Core, type EventListQuery } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { describeOperation, idPath } from '../openapi/operation.js';

const byId = idPath('event', 'evt_');

/** Event log routes, to be mounted at `/api/events` behind authentication (scope `events:read`). */
export function eventRoutes(core: Core): Hono<ParleyEnv> {
  return new Hono<ParleyEnv>()
    .get(
      '/',
      describeOperation({
        operationId: 'listEvents',
        summary: 'List events',
        description:
          'Retained events (default 14 days) in the order they were recorded, after the cursor `after` (from the oldest without it), only those of `type` when given. Follow `nextCursor` to read on; a reader never misses an event.',
        tag: 'Events',
        scope: 'events:read',
        query: EventListQuerySchema,
        success: { status: 200, description: 'A page of events.', schema: EventListSchema },
      }),
      async (c) => {
        return c.json(await core.events.list(c.var.principal.workspaceId, c.req.query() as EventListQuery));
      },
    )
    .get(
      '/:id',
      describeOperation({
        operationId: 'getEvent',
        summary: 'Get an event',
        tag: 'Events',
        scope: 'events:read',
        path: byId,
        success: { status: 200, description: 'The event.', schema: EventSchema },
        errors: { 404: 'No retained event with this id in the key\'s workspace.' },
      }),
      async (c) => {
        return c.json(await core.events.get(c.var.principal.workspaceId, c.req.param('id')));
      },
    );
}
