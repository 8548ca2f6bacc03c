/**
 * @module Lua for each webhook endpoint's deliveries log, in its workspace's slot: a HASH (attempt
 * id → JSON), a ZSET of attempt ids (score 0: id order, newest last), and a ZSET of the events
 * answered with a 2xx. Retention goes by the time in the attempt's id (`dlv_<ULID>`, made when
 * the attempt is recorded), as the event log's does: ULIDs sort by their time, so the expired
 * attempts are the ids below `dlv_` + the retention's start in ULID digits.
 */
import { LUA_PAGE_REPLY, namedScript } from '../script.js';
import { LUA_ID_TIME } from './event-log.lua.js';

/** Expired attempts removed per trim at most: bounded work, whatever the backlog. */
export const DELIVERY_TRIM_STEP = 64;

/**
 * One record in this many trims (chosen by the attempt id's last character, which is random or,
 * for ids made within one millisecond, counts up): up to 4 expired attempts removed per record on
 * average, more than the one per record that expires in a steady state, so the log stays at its
 * retention — and the trim's two ZRANGEBYSCOREs are off fifteen records in sixteen.
 */
export const DELIVERY_TRIM_EVERY = 16;

/**
 * Adds attempts `ids` (their JSON in `jsons`, in the same order) if their endpoint still exists
 * (`webhook` holds it), marks the events of `delivered` (those answered with a 2xx) delivered at
 * `now`, and, when `trim` is '1' (one record in {@link DELIVERY_TRIM_EVERY}), trims up to
 * {@link DELIVERY_TRIM_STEP} attempts whose ids sort below `retainedBelow` (`dlv_` and the
 * retention's start in ULID digits) and the delivered marks set before `retainedFrom` (ms).
 * Returns 1, or 0 (nothing written) without the endpoint.
 */
export const DELIVERY_RECORD = namedScript({
  name: 'delivery_record',
  keys: ['webhook', 'delivery', 'deliveries', 'delivered'],
  args: ['endpointId', 'ids[]', 'jsons[]', 'eventIds[]', 'now', 'retainedFrom', 'retainedBelow', 'trim'],
  lua: `
if redis.call('HEXISTS', webhook, endpointId) == 0 then return 0 end
if trim == '1' then
  local old = redis.call('ZRANGE', deliveries, '-', '(' .. retainedBelow, 'BYLEX', 'LIMIT', 0, ${DELIVERY_TRIM_STEP})
  if #old > 0 then
    redis.call('HDEL', delivery, unpack(old))
    redis.call('ZREM', deliveries, unpack(old))
  end
  local stale = redis.call('ZRANGEBYSCORE', delivered, '-inf', '(' .. retainedFrom, 'LIMIT', 0, ${DELIVERY_TRIM_STEP})
  if #stale > 0 then redis.call('ZREM', delivered, unpack(stale)) end
end
local fields, members = {}, {}
for i = 1, #ids do
  fields[2 * i - 1], fields[2 * i] = ids[i], jsons[i]
  members[2 * i - 1], members[2 * i] = 0, ids[i]
end
redis.call('HSET', delivery, unpack(fields))
redis.call('ZADD', deliveries, unpack(members))
if #eventIds > 0 then
  local marks = {}
  for i = 1, #eventIds do marks[2 * i - 1], marks[2 * i] = now, eventIds[i] end
  redis.call('ZADD', delivered, 'GT', unpack(marks))
end
return 1
`,
});

/**
 * Up to `limit` retained attempts (ids from `retainedBelow` up: see {@link DELIVERY_RECORD}) older
 * than the attempt `before` (when `hasBefore` is '1'; else from the newest), newest first; with
 * `eventField` (the JSON fragment `"eventId":"<id>"`, '' for none) only the attempts whose record
 * contains it. JSON.stringify never leaves an unescaped quote inside a string value, so the
 * fragment can only match the `eventId` field itself. O(limit) without the filter, O(the
 * endpoint's attempts) with it. Returns `{hasMore (0|1), json…}`, or nil when `before` is not a
 * retained attempt of the endpoint (`expired` compares its time with `retainedFrom`, in ms).
 */
export const DELIVERY_PAGE = namedScript({
  name: 'delivery_page',
  keys: ['delivery', 'deliveries'],
  args: ['hasBefore', 'before', 'limit', 'eventField', 'retainedFrom', 'retainedBelow'],
  lua: `${LUA_ID_TIME}${LUA_PAGE_REPLY}
local max = '+'
if hasBefore == '1' then
  if not redis.call('ZSCORE', deliveries, before) or expired(before, retainedFrom) then return false end
  max = '(' .. before
end
local want = tonumber(limit) + 1
local chunk = want
if eventField ~= '' then chunk = 200 end
local out = {}
while #out < want do
  local ids = redis.call('ZRANGE', deliveries, max, '[' .. retainedBelow, 'BYLEX', 'REV', 'LIMIT', 0, chunk)
  if #ids == 0 then break end
  local rows = redis.call('HMGET', delivery, unpack(ids))
  for i = 1, #ids do
    local row = rows[i]
    if #out < want and row and (eventField == '' or string.find(row, eventField, 1, true)) then
      out[#out + 1] = row
    end
  end
  max = '(' .. ids[#ids]
end
table.insert(out, 1, trimToLimit(out, tonumber(limit)))
return out
`,
});
