/**
 * @module Lua for records kept as a HASH (id → JSON) plus ZSET indexes (score 0, member id):
 * agents, webhook endpoints, and the index pages conversations share.
 *
 * With every score 0 a ZSET orders members by their bytes, and ids are time-sortable, so rank
 * order is creation order: "newest first" is `ZRANGE … REV` by rank, O(log n + page), and a
 * total is ZCARD, O(1).
 */
import { LUA_FETCH, type LuaScript } from './script.js';

/**
 * One page of an index, newest first. KEYS: index, hash. ARGV: offset, limit.
 * Returns `{total, record…}`.
 */
export const PAGE: LuaScript = {
  name: 'page',
  lua: `${LUA_FETCH}
local total = redis.call('ZCARD', KEYS[1])
local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if limit <= 0 or offset >= total then return {total} end
local rows = fetch(KEYS[2], redis.call('ZRANGE', KEYS[1], offset, offset + limit - 1, 'REV'))
table.insert(rows, 1, total)
return rows
`,
};

/**
 * Stores a record and adds it to indexes. KEYS: hash, index…. ARGV: id, json. Returns 1.
 */
export const INSERT: LuaScript = {
  name: 'insert',
  lua: `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 2, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
return 1
`,
};

/**
 * Replaces a record only if it exists, moving it between indexes (a status change).
 * KEYS: hash, then `removeCount` indexes to leave, then indexes to join.
 * ARGV: id, json, removeCount. Returns 1, or 0 (nothing written) when the record is absent.
 */
export const REPLACE: LuaScript = {
  name: 'replace',
  lua: `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local leave = tonumber(ARGV[3])
for i = 2, 1 + leave do redis.call('ZREM', KEYS[i], ARGV[1]) end
for i = 2 + leave, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
return 1
`,
};

/**
 * Deletes a record and its index entries. KEYS: hash, index…. ARGV: id.
 * Returns the deleted record's JSON, or nil when there was none.
 */
export const REMOVE: LuaScript = {
  name: 'remove',
  lua: `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return raw
`,
};
