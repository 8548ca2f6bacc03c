/**
 * @module The event log on Redis: the one path of every write script (`EventLog.write`: the event's
 * keys and args, the workspace registry, the outbox hint) — message appends, which several calls
 * share, take the same steps themselves (message-store.ts) — and `storage.events`.
 */
import { EVENT_TYPES, type DomainEvent, type EventType } from '@parley/core';
import {
  traceContextOf,
  withoutHiddenFields,
  type WorkspaceScope,
  type Clock,
  type EventDraft,
  type EventPage,
  type EventStore,
} from '@parley/core/adapter';
import type { RedisRunner } from '../connection.js';
import { outboxKeys, workspaceKeys, type WorkspaceKeys } from '../keys.js';
import { records, strings, type ScriptCall, type ScriptReply } from '../script.js';
import { EVENT_PAGE, EVENT_TRIM, type EVENT_ARGS, type EVENT_KEYS, type WriteScript } from './event-log.lua.js';

/** Settings of the event log; see `RedisStorageOptions`. */
export interface EventLogOptions {
  retentionMs: number;
  leaseMs: number;
  clock: Clock;
}

/** The 32 digits of a ULID (Crockford's base 32), in order. */
export const ULID_DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

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
 * The stored JSON of `event` in `workspaceId` is `JSON.stringify({ ...event, workspaceId })` with
 * `data` last: this is its head, without `data` and the closing brace; the script appends the rest.
 */
export function eventHead(event: DomainEvent | EventDraft, workspaceId: string): string {
  const { data: _data, ...head } = { ...event, workspaceId } as DomainEvent;
  return JSON.stringify(head).slice(0, -1);
}

/** The keys a script recording events reads (`event`, `events`, `eventSeq`, `outbox`; event-log.lua.ts). */
export function recordingKeys(keys: WorkspaceKeys): {
  event: string;
  events: string;
  eventSeq: string;
  outbox: string;
} {
  return { event: keys.event, events: keys.events, eventSeq: keys.eventSeq, outbox: keys.outbox };
}

/** Per workspace's (shared, frozen) key names: its per-type event indexes, which every trim names. */
const typeKeys = new WeakMap<WorkspaceKeys, readonly string[]>();

function eventTypeKeys(keys: WorkspaceKeys): readonly string[] {
  let found = typeKeys.get(keys);
  if (found === undefined)
    typeKeys.set(keys, (found = Object.freeze(EVENT_TYPES.map((type) => keys.eventsOfType(type)))));
  return found;
}

/**
 * Shared by the stores whose writes emit events: the event part of their scripts' calls, and the
 * outbox's discovery (a registry of workspaces, a "dirty" hint after a write into an empty outbox).
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
   * Runs a write script (see `writeScript`) in `workspaceId` — the one path by which inserts,
   * changes and deletes reach Redis, message appends aside (`messageStore`): adds the event
   * part of the call for `event` (none when absent; a {@link EventDraft} gets the `data` the
   * script builds, a full event its own `data` — without hidden fields either way:
   * `withoutHiddenFields`, records.lua.ts), makes sure first that the workspace is in the outbox
   * registry (so the sweep finds its events even if every hint is lost), and after the reply
   * hints takers or sends the trim as the script says ({@link written}). `call` names the
   * script's own keys and args, or is built from the workspace's key names. For a `scope` whose
   * rate limit is pending, the script decides it first (`RedisRunner.script`). Resolves with what the
   * script's body returned.
   */
  async write<K extends string, A extends string>(
    write: WriteScript<K, A>,
    scope: WorkspaceScope,
    call: ScriptCall<K, A> | ((keys: WorkspaceKeys) => ScriptCall<K, A>),
    event?: DomainEvent | EventDraft,
  ): Promise<ScriptReply> {
    const { workspaceId } = scope;
    // Read in the caller's context, before anything is awaited.
    const traceTaken = event && traceContextOf(scope);
    if (event) await this.register(workspaceId);
    const keys = workspaceKeys(this.runner.prefix, workspaceId);
    if (typeof call === 'function') call = call(keys);
    const reply = (await this.runner.script(
      write.script,
      {
        keys: {
          ...call.keys,
          ...recordingKeys(keys),
          // Not touched without an event; any key of the workspace's slot will do.
          eventsOfType: event ? keys.eventsOfType(event.type) : keys.events,
        },
        args: {
          ...call.args,
          eventId: event?.id ?? '',
          eventHead: event ? eventHead(event, workspaceId) : '',
          eventData: event && 'data' in event ? JSON.stringify(eventData(event.data)) : '',
          eventTrace: (event && traceTaken) || '',
        },
      } as ScriptCall<K | (typeof EVENT_KEYS)[number], A | (typeof EVENT_ARGS)[number]>,
      scope,
    )) as [number, ScriptReply?, number?];
    this.written(workspaceId, reply[0], reply[2]);
    return reply[1] ?? null;
  }

  /**
   * What follows every write script's reply in `workspaceId`: hints takers without waiting when
   * the script recorded events into an empty outbox (`recorded` 1; behind waiting events no hint is
   * needed: the holder's ack hints while events are left, and a lost hint only delays them to the
   * next sweep), and sends {@link trim} when the script says one is due (`trimDue` 1).
   */
  written(workspaceId: string, recorded: unknown, trimDue: unknown): void {
    if (recorded === 1) void this.hint(workspaceId);
    if (trimDue === 1) void this.trim(workspaceId);
  }

  /**
   * Removes up to `TRIM_STEP` expired events of the workspace (`EVENT_TRIM`). Never rejects, and
   * writers do not wait for it: it is sent as soon as the write's reply arrives, so normally
   * ahead of whatever the writer's caller sends next on the same connection. A lost trim leaves
   * its events to the next one; reads and takes skip them meanwhile.
   */
  trim(workspaceId: string): Promise<void> {
    const keys = workspaceKeys(this.runner.prefix, workspaceId);
    return this.runner
      .script(EVENT_TRIM, {
        keys: { event: keys.event, events: keys.events, outbox: keys.outbox, eventTypes: eventTypeKeys(keys) },
        args: { retainedFrom: this.retainedFrom() },
      })
      .then(
        () => undefined,
        () => undefined,
      );
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
    return this.runner
      .run((client) => client.zadd(dirty, 'NX', Date.now(), workspaceId))
      .then(
        () => undefined,
        () => undefined,
      );
  }
}

/**
 * {@link EventStore} on Redis: `get` is one HGET, `list` one script, O(limit) (plus expired
 * entries not trimmed yet) on the whole log or one type's index.
 */
export function eventStore(log: EventLog): EventStore {
  return {
    async get(scope: WorkspaceScope, id: string): Promise<DomainEvent | null> {
      if (log.isExpired(id)) return null;
      const { runner } = log;
      const raw = await runner.hget(workspaceKeys(runner.prefix, scope.workspaceId).event, id, scope);
      return raw === null ? null : (JSON.parse(raw) as DomainEvent);
    },

    async list(
      scope: WorkspaceScope,
      { after, limit, type }: { after?: string; limit: number; type?: EventType },
    ): Promise<EventPage | null> {
      const { runner } = log;
      const keys = workspaceKeys(runner.prefix, scope.workspaceId);
      const reply = await runner.script(
        EVENT_PAGE,
        {
          keys: {
            events: keys.events,
            index: type === undefined ? keys.events : keys.eventsOfType(type),
            event: keys.event,
          },
          args: {
            hasAfter: after === undefined ? '0' : '1',
            after: after ?? '',
            limit,
            retainedFrom: log.retainedFrom(),
          },
        },
        scope,
      );
      if (reply === null) return null;
      const [more, ...rows] = strings(reply);
      return { events: records<DomainEvent>(rows), hasMore: more === '1' };
    },
  };
}

/** An event's `data` as recorded: an object without its hidden fields (an agent's tools secret). */
export function eventData(data: DomainEvent['data']): DomainEvent['data'] {
  return data !== null && typeof data === 'object' ? withoutHiddenFields(data) : data;
}
