/**
 * @module Lua for the event log and outbox (README, "Events and the outbox"): the helper every
 * event-emitting write script includes, the trim, the log page, and the outbox's take, ack and
 * sweep check.
 *
 * Per workspace (all under its hash tag): `event` HASH id → JSON, `events` ZSET scored by a commit
 * sequence (`eventSeq`, INCR), one such ZSET per type, and the `outbox` LIST of entries: an event's
 * id, followed by a space and the W3C trace context it was recorded in when it had one. Retention is
 * judged from the time in the event's id (`evt_<ULID>`: the first 10 ULID characters are ms since
 * the epoch), compared as a number — never by Lua string order, which follows the server's locale.
 */
import { LUA_PAGE_REPLY, namedScript, type LuaScript } from '../script.js';

/** Keys every write script declares (after its own; {@link writeScript} adds them), in this order. */
export const EVENT_KEYS = ['event', 'events', 'eventSeq', 'outbox', 'eventsOfType'] as const;
/**
 * Args every write script declares (after its own; {@link writeScript} adds them): `eventId` ''
 * records nothing; `eventHead` is the event's JSON without `data` and its closing brace;
 * `eventData` the JSON of `data`, or '' when the script supplies it (the record as it stored it);
 * `eventTrace` the write's W3C trace context, '' for none (kept with the outbox entry).
 */
export const EVENT_ARGS = ['eventId', 'eventHead', 'eventData', 'eventTrace'] as const;

/** A write script: its own keys `K` and args `A`, plus {@link EVENT_KEYS} and {@link EVENT_ARGS}. */
export interface WriteScript<K extends string, A extends string> {
  script: LuaScript<K | (typeof EVENT_KEYS)[number], A | (typeof EVENT_ARGS)[number]>;
}

/** Expired events removed per trim at most: bounded work, whatever the backlog. */
export const TRIM_STEP = 64;

/**
 * A write whose commit sequence number is a multiple of this is followed by a trim
 * ({@link EVENT_TRIM}): one write in 16 has the log's start looked at, which can remove up to 4
 * expired events per write on average — more than the one per write that expires in a steady
 * state, so the log stays at its retention.
 */
export const TRIM_EVERY = 16;

/** `entryId(entry)`: the event id of an outbox entry (`id`, or `id traceContext`). */
export const LUA_OUTBOX_ENTRY = `
local function entryId(entry)
  local space = string.find(entry, ' ', 1, true)
  if space then return string.sub(entry, 1, space - 1) end
  return entry
end
`;

/** `idTime(id)`: ms since the epoch in `<prefix>_<ULID>`, nil when malformed; `expired(id, from)`. */
export const LUA_ID_TIME = `
local ULID_DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
local function idTime(id)
  local at = string.find(id, '_', 1, true)
  if not at or #id < at + 10 then return nil end
  local ms = 0
  for i = at + 1, at + 10 do
    local digit = string.find(ULID_DIGITS, string.sub(id, i, i), 1, true)
    if not digit then return nil end
    ms = ms * 32 + digit - 1
  end
  return ms
end
local function expired(id, from)
  local ms = idTime(id)
  return ms ~= nil and ms < tonumber(from)
end
`;

/**
 * `beginEvents(count)` and `recordEvents(first, ids, jsons, typeKeys, traces)`, which read the locals
 * `event`, `events`, `eventSeq` and `outbox` (the workspace's keys, {@link EVENT_KEYS}): events
 * recorded by one script, in order. A script calls `beginEvents(count)` once its preconditions
 * hold and before its first write: it takes the next `count` commit sequence numbers (INCRBY) and
 * returns the first — the only command of the events' that can fail (a corrupted counter); Redis
 * does not roll a script back, so failing before any write is what keeps "no change without its
 * event". After the change's writes, `recordEvents` appends the events (ids, their JSON and the
 * key of each one's type index, and each one's trace context or '') to the log, the type indexes
 * and the outbox (`id` or `id traceContext`) — one HSET, one ZADD
 * per index and one RPUSH however many — and returns `recorded`, 1 when the outbox was empty
 * before (takers need a hint), 2 when events were already waiting there (whatever hands those on —
 * their hint, the holder's ack, which hints again while events are left, or the sweep — hands
 * these on too); and `trimDue`, 1 when a multiple of {@link TRIM_EVERY} is among the numbers.
 *
 * Expired events are not removed here: that needs every type's index among the script's keys,
 * ten more keys on every write for the one write in 16 that uses them. {@link EVENT_TRIM} does it
 * instead, sent by the writer right after a write that reports `trimDue`.
 */
export const LUA_RECORD_EVENTS = `
local function beginEvents(count)
  return redis.call('INCRBY', eventSeq, count) - count + 1
end
local function recordEvents(first, ids, jsons, typeKeys, traces)
  local fields, scored, typed, types, entries = {}, {}, {}, {}, {}
  for i = 1, #ids do
    if traces[i] ~= '' then entries[i] = ids[i] .. ' ' .. traces[i] else entries[i] = ids[i] end
    local seq = first + i - 1
    fields[2 * i - 1], fields[2 * i] = ids[i], jsons[i]
    scored[2 * i - 1], scored[2 * i] = seq, ids[i]
    local index = typed[typeKeys[i]]
    if not index then
      index = {}
      typed[typeKeys[i]] = index
      types[#types + 1] = typeKeys[i]
    end
    index[#index + 1] = seq
    index[#index + 1] = ids[i]
  end
  redis.call('HSET', event, unpack(fields))
  redis.call('ZADD', events, unpack(scored))
  for _, key in ipairs(types) do redis.call('ZADD', key, unpack(typed[key])) end
  local recorded, trimDue = 1, 0
  if redis.call('RPUSH', outbox, unpack(entries)) > #ids then recorded = 2 end
  if math.floor((first + #ids - 1) / ${TRIM_EVERY}) > math.floor((first - 1) / ${TRIM_EVERY}) then trimDue = 1 end
  return recorded, trimDue
end
`;

/**
 * `beginEvent()` and `recordEvent(seq, data)`: {@link LUA_RECORD_EVENTS} for the one event of a
 * write script, which read the {@link EVENT_KEYS} and {@link EVENT_ARGS} locals and do nothing when
 * `eventId` is ''. `recordEvent` records `eventHead` + `data` (the JSON the script built, unless the
 * caller gave `eventData`) and sets the locals `recorded` and `trimDue`.
 */
const LUA_RECORD_EVENT = `${LUA_RECORD_EVENTS}
local recorded, trimDue = 0, 0
local function beginEvent()
  if eventId == '' then return nil end
  return beginEvents(1)
end
local function recordEvent(seq, data)
  if not seq then return end
  if eventData ~= '' then data = eventData end
  recorded, trimDue = recordEvents(seq, {eventId}, {eventHead .. ',"data":' .. data .. '}'}, {eventsOfType}, {eventTrace})
end
`;

/**
 * Removes up to {@link TRIM_STEP} expired events (recorded before `retainedFrom`) from the log's
 * start, with their entries in `eventTypes` (every type's index) and the expired ids at the
 * outbox's head. Bounded work whatever the backlog; reads and takes skip expired events that are
 * not removed yet. Returns how many events it removed.
 */
export const EVENT_TRIM = namedScript({
  name: 'event_trim',
  keys: ['event', 'events', 'outbox', 'eventTypes[]'],
  args: ['retainedFrom'],
  lua: `${LUA_ID_TIME}${LUA_OUTBOX_ENTRY}
local oldest = redis.call('ZRANGE', events, 0, ${TRIM_STEP - 1}, 'WITHSCORES')
local gone, last = {}, nil
for i = 1, #oldest, 2 do
  if not expired(oldest[i], retainedFrom) then break end
  gone[#gone + 1] = oldest[i]
  last = oldest[i + 1]
end
if not last then return 0 end
redis.call('HDEL', event, unpack(gone))
redis.call('ZREMRANGEBYSCORE', events, '-inf', last)
for _, typed in ipairs(eventTypes) do redis.call('ZREMRANGEBYSCORE', typed, '-inf', last) end
for _ = 1, ${TRIM_STEP} do
  local head = redis.call('LINDEX', outbox, 0)
  if not head or redis.call('HEXISTS', event, entryId(head)) == 1 then break end
  redis.call('LPOP', outbox)
end
return #gone
`,
});

/**
 * Declares a write script — every script that inserts, changes or deletes a record, whether or not
 * it records an event: `lua` runs with the helpers of `LUA_RECORD_EVENT` (`beginEvent`,
 * `recordEvent`) and the event's keys and args appended to its own, and the script answers
 * `{recorded (0|1|2), what lua returned, trimDue (0|1)}`. `EventLog.write` (event-log.ts) is the
 * one caller: it passes the event part, registers the workspace, hints the outbox and sends the
 * trim, so a new write script cannot forget a step.
 */
export function writeScript<const K extends string, const A extends string>(definition: {
  name: string;
  keys: readonly K[];
  args: readonly A[];
  lua: string;
}): WriteScript<K, A> {
  const { name, keys, args, lua } = definition;
  return {
    script: namedScript({
      name,
      keys: [...keys, ...EVENT_KEYS],
      args: [...args, ...EVENT_ARGS],
      lua: `${LUA_RECORD_EVENT}
local function write()
${lua}
end
local reply = write()
return {recorded, reply, trimDue}
`,
    }),
  };
}

/**
 * Up to `limit` retained events after the event `after` (when `hasAfter` is '1'; else from the
 * start) in commit order, read
 * from `index` (the whole log or one type's). O(limit) plus the expired entries not trimmed yet.
 * Returns `{hasMore (0|1), json…}`, or nil when `after` is not a retained event of the log.
 */
export const EVENT_PAGE = namedScript({
  name: 'event_page',
  keys: ['events', 'index', 'event'],
  args: ['hasAfter', 'after', 'limit', 'retainedFrom'],
  lua: `${LUA_ID_TIME}${LUA_PAGE_REPLY}
local from = '-inf'
if hasAfter == '1' then
  local seq = redis.call('ZSCORE', events, after)
  if not seq or expired(after, retainedFrom) then return false end
  from = '(' .. seq
end
local want = tonumber(limit) + 1
local out = {}
while #out < want do
  local rows = redis.call('ZRANGE', index, from, '+inf', 'BYSCORE', 'LIMIT', 0, want, 'WITHSCORES')
  if #rows == 0 then break end
  for i = 1, #rows, 2 do
    if #out < want and not expired(rows[i], retainedFrom) then
      local json = redis.call('HGET', event, rows[i])
      if json then out[#out + 1] = json end
    end
    from = '(' .. rows[i + 1]
  end
end
table.insert(out, 1, trimToLimit(out, tonumber(limit)))
return out
`,
});

/**
 * Takes the outbox's lock (`SET NX PX leaseMs` with `receipt`) and reads its first `max` events;
 * ids whose event was trimmed or left the retention are dropped from the outbox on the way.
 * Returns `{'held'}` (another taker holds it), `{'empty'}` (lock released), `{'more'}` (only
 * trimmed ids seen so far; lock released, call again), or `{'batch', entry, json, …}` (each
 * outbox entry: the id, then a space and the trace context when there is one).
 */
export const OUTBOX_TAKE = namedScript({
  name: 'outbox_take',
  keys: ['outbox', 'outboxLock', 'event'],
  args: ['receipt', 'max', 'leaseMs', 'retainedFrom'],
  lua: `${LUA_ID_TIME}${LUA_OUTBOX_ENTRY}
if not redis.call('SET', outboxLock, receipt, 'NX', 'PX', leaseMs) then return {'held'} end
for _ = 1, 10 do
  local entries = redis.call('LRANGE', outbox, 0, tonumber(max) - 1)
  if #entries == 0 then break end
  local ids = {}
  for i = 1, #entries do ids[i] = entryId(entries[i]) end
  local rows = redis.call('HMGET', event, unpack(ids))
  local out = {'batch'}
  for i = 1, #ids do
    if rows[i] and not expired(ids[i], retainedFrom) then
      out[#out + 1] = entries[i]
      out[#out + 1] = rows[i]
    else
      redis.call('LREM', outbox, 1, entries[i])
    end
  end
  if #out > 1 then return out end
end
redis.call('DEL', outboxLock)
if redis.call('LLEN', outbox) > 0 then return {'more'} end
return {'empty'}
`,
});

/**
 * Acknowledges a batch: removes the outbox's head as far as it holds ids of the batch (so an ack
 * after a lost lease removes only what was handed on, and a second ack nothing) — one LRANGE and
 * one LTRIM, whatever the batch's size — and releases the lock if it is still `receipt`'s.
 * Returns how many ids are left in the outbox.
 */
export const OUTBOX_ACK = namedScript({
  name: 'outbox_ack',
  keys: ['outbox', 'outboxLock'],
  args: ['receipt', 'ids[]'],
  lua: `${LUA_OUTBOX_ENTRY}
local taken = {}
for _, id in ipairs(ids) do taken[id] = true end
if #ids > 0 then
  local head = redis.call('LRANGE', outbox, 0, #ids - 1)
  local done = 0
  while done < #head and taken[entryId(head[done + 1])] do done = done + 1 end
  if done > 0 then redis.call('LTRIM', outbox, done, -1) end
end
if redis.call('GET', outboxLock) == receipt then redis.call('DEL', outboxLock) end
return redis.call('LLEN', outbox)
`,
});

/** The sweep's check: 1 when the outbox has ids and nobody holds its lock, else 0. */
export const OUTBOX_PENDING = namedScript({
  name: 'outbox_pending',
  keys: ['outbox', 'outboxLock'],
  args: [],
  lua: `
if redis.call('LLEN', outbox) > 0 and redis.call('EXISTS', outboxLock) == 0 then return 1 end
return 0
`,
});
