/** @module The event log as the API shows it: `GET /api/events` and `GET /api/events/:id`. */
import { inject, injectable } from '../di.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { WorkspaceScope } from '../ports/scope.js';
import type { Storage } from '../ports/storage.js';
import { EventListQuerySchema, type EventListQuery } from '../schemas/event.js';
import { TOKENS } from '../tokens.js';
import type { DomainEvent, EventType } from '../types.js';
import { decodeCursor, encodeCursor, invalidCursor } from './cursor.js';
import { parse } from '../validation.js';

/** An event as the API returns it: `timestamp` is when it occurred (ISO 8601 UTC with ms). */
export interface ApiEvent {
  id: string;
  type: EventType;
  timestamp: string;
  data: DomainEvent['data'];
}

/**
 * A page of the event log in commit order. `nextCursor` is present exactly when `hasMore` is true
 * and fetches the next page when passed as `after`.
 */
export interface EventList {
  events: ApiEvent[];
  hasMore: boolean;
  nextCursor?: string;
}

/** The API shape of a recorded event (the workspace id is the caller's own, so it is left out). */
export function toApiEvent(event: DomainEvent): ApiEvent {
  return { id: event.id, type: event.type, timestamp: event.occurredAt, data: event.data };
}

/** The owner of event-log cursors (services/cursor.ts): one log per workspace, which the store checks. */
const EVENT_LOG = 'events';

/** The cursor for "events recorded after `eventId`". */
export function encodeEventCursor(eventId: string): string {
  return encodeCursor(EVENT_LOG, eventId);
}

/**
 * Reads a workspace's event log (retained events only, see the storage adapters'
 * `eventRetentionMs`). Every method takes the {@link WorkspaceScope} first; another workspace's event is
 * `not_found`, and its cursor `invalid_request`.
 */
@injectable()
export class EventService {
  constructor(@inject(TOKENS.storage) private readonly storage: Storage) {}

  /**
   * Up to `limit` (1–100, default 50) events in the order they were recorded, after the `after`
   * cursor (from the oldest retained event without it), only those of `type` when given.
   * @throws ParleyError `validation_failed`; `invalid_request` (forged, foreign or expired cursor —
   *   the event it names is no longer retained)
   */
  async list(scope: WorkspaceScope, query: EventListQuery = {}): Promise<EventList> {
    const { after, limit, type } = parse(EventListQuerySchema, query);
    const afterId = after === undefined ? undefined : decodeCursor(EVENT_LOG, after);
    const page = await this.storage.events.list(scope, { after: afterId, limit, ...(type && { type }) });
    if (!page) throw invalidCursor();
    const events = page.events.map(toApiEvent);
    const last = events.at(-1);
    if (!page.hasMore || !last) return { events, hasMore: false };
    return { events, hasMore: true, nextCursor: encodeEventCursor(last.id) };
  }

  /** @throws ParleyError `not_found` (unknown, another workspace's, or older than the retention) */
  async get(scope: WorkspaceScope, id: string): Promise<ApiEvent> {
    const event = await this.storage.events.get(scope, id);
    if (!event) throw ParleyError.notFound('event', id);
    return toApiEvent(event);
  }
}
