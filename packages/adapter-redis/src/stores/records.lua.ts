/**
 * @module Lua for records kept as a HASH (id → JSON) plus ZSET indexes (score 0, member id):
 * agents and webhook endpoints, and the index pages conversations and plants share.
 *
 * With every score 0 a ZSET orders members by their bytes, and ids are time-sortable, so rank
 * order is creation order: "newest first" is `ZRANGE … REV` by rank, O(log n + page), and a
 * total is ZCARD, O(1). Writes compare the stored JSON as a string (compare-and-set), never
 * decode it: Lua's cjson rejects the lone UTF-16 surrogates a JSON body may carry.
 */
import { LUA_FETCH, namedScript } from '../script.js';
import { EVENT_ARGS, EVENT_KEYS, LUA_RECORD_EVENT } from './event-log.lua.js';

/** One page of `index`, newest first. Returns `{total, record…}`. */
export const PAGE = namedScript({
  name: 'page',
  keys: ['index', 'hash'],
  args: ['offset', 'limit'],
  lua: `${LUA_FETCH}
local total = redis.call('ZCARD', index)
local first, count = tonumber(offset), tonumber(limit)
if count <= 0 or first >= total then return {total} end
local rows = fetch(hash, redis.call('ZRANGE', index, first, first + count - 1, 'REV'))
table.insert(rows, 1, total)
return rows
`,
});

/** Stores a record, adds it to `indexes` and records the event (if any). Returns 1. */
export const RECORD_INSERT = namedScript({
  name: 'record_insert',
  keys: ['hash', 'indexes[]', ...EVENT_KEYS],
  args: ['id', 'json', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
local seq = beginEvent()
redis.call('HSET', hash, id, json)
for _, index in ipairs(indexes) do redis.call('ZADD', index, 0, id) end
recordEvent(seq)
return 1
`,
});

/**
 * Compare-and-set: replaces the record only if its stored JSON is still `expected` (byte for
 * byte), moving it from the `leave` indexes to the `join` ones and recording the event (if any).
 * Returns 'ok', 'gone' (no record) or 'changed' (another write came first); only 'ok' writes.
 */
export const RECORD_UPDATE = namedScript({
  name: 'record_update',
  keys: ['hash', 'leave[]', 'join[]', ...EVENT_KEYS],
  args: ['id', 'expected', 'json', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
local stored = redis.call('HGET', hash, id)
if not stored then return 'gone' end
if stored ~= expected then return 'changed' end
local seq = beginEvent()
redis.call('HSET', hash, id, json)
for _, index in ipairs(leave) do redis.call('ZREM', index, id) end
for _, index in ipairs(join) do redis.call('ZADD', index, 0, id) end
recordEvent(seq)
return 'ok'
`,
});

/**
 * Deletes a record, its `indexes` entries, and the `purge` keys (UNLINK: freed off the main
 * thread). Returns the deleted record's JSON, or nil (nothing written) when there was none. With a
 * non-empty `expected`, deletes only while the stored JSON is that string, else returns `{'changed'}`
 * (a table, so no stored JSON can be mistaken for it).
 */
export const RECORD_REMOVE = namedScript({
  name: 'record_remove',
  keys: ['hash', 'indexes[]', 'purge[]'],
  args: ['id', 'expected'],
  lua: `
local raw = redis.call('HGET', hash, id)
if not raw then return false end
if expected ~= '' and raw ~= expected then return {'changed'} end
redis.call('HDEL', hash, id)
for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
if #purge > 0 then redis.call('UNLINK', unpack(purge)) end
return raw
`,
});
