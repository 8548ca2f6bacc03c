/** @module Event log request schemas (`GET /api/events`, docs in the README's events section). */
import * as v from 'valibot';
import { EVENT_TYPES } from '../types.js';
import { integerParam, text } from './common.js';

/** Default and largest `limit` of an event page. */
export const EVENT_LIMIT = { default: 50, max: 100 } as const;

/**
 * Query of `GET /api/events`: `limit` 1–100 (default 50), cursor `after` (the `nextCursor` of the
 * previous page; without it the page starts at the oldest retained event), `type` one event type.
 */
export const EventListQuerySchema = v.strictObject({
  after: v.optional(v.pipe(text(512), v.description('Cursor: the nextCursor of the previous page.'))),
  limit: v.optional(integerParam(1, EVENT_LIMIT.max), EVENT_LIMIT.default),
  type: v.optional(v.picklist(EVENT_TYPES)),
});
export type EventListQuery = v.InferInput<typeof EventListQuerySchema>;
