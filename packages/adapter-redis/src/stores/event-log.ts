/**
 * @module The event log on Redis: what every event-emitting write shares (the named keys and args
 * of `recordEvent()`, the workspace registry, the outbox hint) and `storage.events`.
 */
import { EVENT_TYPES, type Clock, type DomainEvent, type EventPage, type EventStore, type EventType } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { outboxKeys, workspaceKeys, type WorkspaceKeys } from '../keys.js';
import { records, strings } from '../script.js';
import { EVENT_PAGE } from './event-log.lua.js';

/** Settings of the event log; see `RedisStorageOptions`. */
export interface EventLogOptions {
  retentionMs: number;
  leaseMs: number;
  clock: Clock;
}

const ULID_DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Ms since the epoch in a `<prefix>_<ULID>` id (its first 10 ULID characters), or `null` when the
 * id has no ULID; the same reading as the scripts' `idTime`.
 */
export function idTime(id: string): number | null {
  const at = id.indexOf('_');
  if (at < 0 || id.length < at + 11) return null;
  let ms = 0;
  for (const char of id.slice(at + 1, at + 11)) {
    const digit = ULID_DIGITS.indexOf(char);
    if (digit < 0) return null;
    ms = ms * 32 + digit;
  }
  return ms;
}

/**
 * The stored JSON of `event` in `workspaceId`: `JSON.stringify({ ...event, workspaceId })`, byte
 * for byte — built around `dataJson` (the JSON of `event.data`) when the caller has it and the
 * event has exactly the fields of {@link DomainEvent}, in their order.
 */
function eventJson(event: DomainEvent, workspaceId: string, dataJson: string | undefined): string {
  const stored = { ...event, workspaceId };
  if (dataJson === undefined) return JSON.stringify(stored);
  const { data, ...head } = stored;
  const fields = Object.keys(stored);
  if (fields.length !== 5 || fields[4] !== 'data' || data === undefined) return JSON.stringify(stored);
  return `${JSON.stringify(head).slice(0, -1)},"data":${dataJson}}`;
}

/** Per workspace's (shared, frozen) key names: its per-type event indexes, which every write names. */
const typeKeys = new WeakMap<WorkspaceKeys, readonly string[]>();

function eventTypeKeys(keys: WorkspaceKeys): readonly string[] {
  let found = typeKeys.get(keys);
  if (found === undefined) typeKeys.set(keys, (found = Object.freeze(EVENT_TYPES.map((type) => keys.eventsOfType(type)))));
  return found;
}

/**
 * Shared by the stores whose writes emit events: the event part of their scripts' calls, and the
 * outbox's discovery (a registry of workspaces, a "dirty" hint after each write).
 */
export class EventLog {
  /** Workspaces this process has registered (or is registering), so each costs one SADD. */
  private readonly registered = new Map<string, Promise<void>>();

  constructor(
    readonly runner: RedisRunner,
    readonly options: EventLogOptions,
  ) {}

  /** Events recorded before this time (ms since the epoch) are no longer retained. */
  retainedFrom(): number {
    return this.options.clock.now() - this.options.retentionMs;
  }

  /** True when `id`'s time is before the retention (ids without a ULID time are kept). */
  isExpired(id: string): boolean {
    const ms = idTime(id);
    return ms !== null && ms < this.retainedFrom();
  }

  /**
   * The {@link EVENT_KEYS} and {@link EVENT_ARGS} values of a write recording `event` (none
   * when absent) in `workspaceId`; the stored event carries that workspace id. `dataJson`, when
   * given, is `JSON.stringify(event.data)` already made by the caller (the record it stores), and
   * is spliced in rather than serialised again.
   */
  params(workspaceId: string, keys: WorkspaceKeys, event: DomainEvent | undefined, dataJson?: string) {
    return {
      keys: {
        event: keys.event,
        events: keys.events,
        eventSeq: keys.eventSeq,
        outbox: keys.outbox,
        // Not touched without an event; any key of the workspace's slot will do.
        eventsOfType: event ? keys.eventsOfType(event.type) : keys.events,
        eventTypes: eventTypeKeys(keys),
      },
      args: {
        eventId: event?.id ?? '',
        eventJson: event ? eventJson(event, workspaceId, dataJson) : '',
        retainedFrom: this.retainedFrom(),
      },
    };
  }

  /**
   * Runs an event-emitting write: first makes sure the workspace is in the outbox registry (so the
   * sweep will find its events even if every hint is lost), then `write`, then — when it recorded
   * an event — hints takers without waiting (a lost hint only delays the event to the next sweep).
   */
  async write<T>(workspaceId: string, write: () => Promise<T>, recorded: (result: T) => boolean): Promise<T> {
    await this.register(workspaceId);
    const result = await write();
    if (recorded(result)) void this.hint(workspaceId);
    return result;
  }

  /** Adds the workspace to the registry once per process (retried after a failure). */
  register(workspaceId: string): Promise<void> {
    let done = this.registered.get(workspaceId);
    if (!done) {
      const { workspaces } = outboxKeys(this.runner.prefix);
      done = this.runner.run((client) => client.sadd(workspaces, workspaceId)).then(() => undefined);
      this.registered.set(workspaceId, done);
      done.catch(() => this.registered.delete(workspaceId));
    }
    return done;
  }

  /**
   * Tells takers the workspace has events (the earliest hint's time is kept). Never rejects:
   * writers do not wait for it, and a lost hint is found again by the sweep.
   */
  hint(workspaceId: string): Promise<void> {
    const { dirty } = outboxKeys(this.runner.prefix);
    return this.runner.run((client) => client.zadd(dirty, 'NX', Date.now(), workspaceId)).then(
      () => undefined,
      () => undefined,
    );
  }
}

/**
 * {@link EventStore} on Redis: `get` is one HGET, `list` one script, O(limit) (plus expired
 * entries not trimmed yet) on the whole log or one type's index.
 */
export class RedisEventStore implements EventStore {
  constructor(private readonly log: EventLog) {}

  async get(workspaceId: string, id: string): Promise<DomainEvent | null> {
    if (this.log.isExpired(id)) return null;
    const { runner } = this.log;
    const raw = await runner.run((client) => client.hget(workspaceKeys(runner.prefix, workspaceId).event, id));
    return raw === null ? null : (JSON.parse(raw) as DomainEvent);
  }

  async list(workspaceId: string, { after, limit, type }: { after?: string; limit: number; type?: EventType }): Promise<EventPage | null> {
    const { runner } = this.log;
    const keys = workspaceKeys(runner.prefix, workspaceId);
    const reply = await runner.script(EVENT_PAGE, {
      keys: { events: keys.events, index: type === undefined ? keys.events : keys.eventsOfType(type), event: keys.event },
      args: { hasAfter: after === undefined ? '0' : '1', after: after ?? '', limit, retainedFrom: this.log.retainedFrom() },
    });
    if (reply === null) return null;
    const [more, ...rows] = strings(reply);
    return { events: records<DomainEvent>(rows), hasMore: more === '1' };
  }
}
