/** @module Builds the domain events services hand to the storage writes that record them. */
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import type { EventDraft } from '../ports/storage.js';
import type { DomainEvent, EventType } from '../types.js';
import { isoTimestamp } from './timestamp.js';

/** A new event with a fresh `evt_` id, stamped with the clock's current time. */
export function domainEvent(
  ids: IdGenerator,
  clock: Clock,
  workspaceId: string,
  type: EventType,
  data: DomainEvent['data'],
): DomainEvent {
  return { id: ids.next('evt'), type, workspaceId, occurredAt: isoTimestamp(clock.now()), data };
}

/**
 * A new event without its `data`, for a store write that fills `data` in with the record as it
 * stores (or removes) it (ports/storage.ts `EventDraft`).
 */
export function eventDraft(ids: IdGenerator, clock: Clock, workspaceId: string, type: EventType): EventDraft {
  return { id: ids.next('evt'), type, workspaceId, occurredAt: isoTimestamp(clock.now()) };
}
