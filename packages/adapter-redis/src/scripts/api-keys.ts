/**
 * @module Lua for API keys: records by SHA-256 hash, key id → hash, and createdAt-ordered
 * indexes (all keys, per workspace). All keys carry the `{keys}` hash tag.
 */
import { LUA_FETCH, type LuaScript } from './script.js';

/**
 * Stores a key. KEYS: by-hash hash, by-id hash, all index, workspace index.
 * ARGV: hash, keyId, json, createdAt in ms. Returns 1.
 */
export const KEY_INSERT: LuaScript = {
  name: 'key_insert',
  lua: `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[2])
return 1
`,
};

/**
 * Every key of an index, ascending createdAt (then key id). KEYS: index, by-id hash, by-hash
 * hash. Returns the JSON records.
 */
export const KEY_LIST: LuaScript = {
  name: 'key_list',
  lua: `${LUA_FETCH}
return fetch(KEYS[3], fetch(KEYS[2], redis.call('ZRANGE', KEYS[1], 0, -1)))
`,
};

/** The record of a key id. KEYS: by-id hash, by-hash hash. ARGV: keyId. Returns JSON or nil. */
export const KEY_BY_ID: LuaScript = {
  name: 'key_by_id',
  lua: `
local hash = redis.call('HGET', KEYS[1], ARGV[1])
if not hash then return false end
return redis.call('HGET', KEYS[2], hash)
`,
};

/**
 * Deletes a key if its record is still exactly `expected` (compare-and-set: an upsert may have
 * moved it to another workspace index since it was read; a concurrent revoke may have deleted it).
 * KEYS: by-hash hash, by-id hash, all index, workspace index of `expected`.
 * ARGV: keyId, hash, expected JSON. Returns 1, or 0 when nothing was deleted.
 */
export const KEY_REVOKE: LuaScript = {
  name: 'key_revoke',
  lua: `
if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[3] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`,
};

/**
 * Stores a key unless its hash is taken. KEYS and ARGV as {@link KEY_INSERT}. Returns nil when
 * it stored the key, else the JSON record already stored under that hash (nothing is written):
 * so concurrent upserts of one raw key store it once.
 */
export const KEY_INSERT_NEW: LuaScript = {
  name: 'key_insert_new',
  lua: `
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return existing end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[2])
return false
`,
};

/**
 * Replaces a stored key's record if it is still exactly `expected` (compare-and-set), keeping
 * its key id and position in the indexes but moving it to the new workspace index.
 * KEYS: by-hash hash, old workspace index, new workspace index.
 * ARGV: hash, expected JSON, new JSON, keyId, createdAt in ms. Returns 1, or 0 when the record
 * changed or vanished in between.
 */
export const KEY_REPLACE: LuaScript = {
  name: 'key_replace',
  lua: `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
return 1
`,
};
