/**
 * @module Lua for API keys: records by SHA-256 hash, key id → hash, and createdAt-ordered
 * indexes (all keys, per workspace). All keys carry the `{keys}` hash tag.
 */
import { LUA_FETCH, namedScript } from './script.js';

/** Stores a key: record under `hash`, `keyId` → hash, both indexes scored by `createdAt` (ms). Returns 1. */
export const KEY_INSERT = namedScript({
  name: 'key_insert',
  keys: ['byHash', 'byId', 'all', 'byWorkspace'],
  args: ['hash', 'keyId', 'json', 'createdAt'],
  lua: `
redis.call('HSET', byHash, hash, json)
redis.call('HSET', byId, keyId, hash)
redis.call('ZADD', all, createdAt, keyId)
redis.call('ZADD', byWorkspace, createdAt, keyId)
return 1
`,
});

/** Every key of `index`, ascending createdAt (then key id). Returns the JSON records. */
export const KEY_LIST = namedScript({
  name: 'key_list',
  keys: ['index', 'byId', 'byHash'],
  args: [],
  lua: `${LUA_FETCH}
return fetch(byHash, fetch(byId, redis.call('ZRANGE', index, 0, -1)))
`,
});

/** The record of `keyId`: JSON or nil. */
export const KEY_BY_ID = namedScript({
  name: 'key_by_id',
  keys: ['byId', 'byHash'],
  args: ['keyId'],
  lua: `
local hash = redis.call('HGET', byId, keyId)
if not hash then return false end
return redis.call('HGET', byHash, hash)
`,
});

/**
 * Deletes a key if its record is still exactly `expected` (compare-and-set: an upsert may have
 * moved it to another workspace index since it was read; a concurrent revoke may have deleted it).
 * `byWorkspace` is the index of `expected`'s workspace. Returns 1, or 0 when nothing was deleted.
 */
export const KEY_REVOKE = namedScript({
  name: 'key_revoke',
  keys: ['byHash', 'byId', 'all', 'byWorkspace'],
  args: ['keyId', 'hash', 'expected'],
  lua: `
if redis.call('HGET', byHash, hash) ~= expected then return 0 end
redis.call('HDEL', byHash, hash)
redis.call('HDEL', byId, keyId)
redis.call('ZREM', all, keyId)
redis.call('ZREM', byWorkspace, keyId)
return 1
`,
});

/**
 * Stores a key unless its hash is taken (keys and args as {@link KEY_INSERT}). Returns nil when it
 * stored the key, else the JSON record already stored under that hash (nothing is written): so
 * concurrent upserts of one raw key store it once.
 */
export const KEY_INSERT_NEW = namedScript({
  name: 'key_insert_new',
  keys: ['byHash', 'byId', 'all', 'byWorkspace'],
  args: ['hash', 'keyId', 'json', 'createdAt'],
  lua: `
local existing = redis.call('HGET', byHash, hash)
if existing then return existing end
redis.call('HSET', byHash, hash, json)
redis.call('HSET', byId, keyId, hash)
redis.call('ZADD', all, createdAt, keyId)
redis.call('ZADD', byWorkspace, createdAt, keyId)
return false
`,
});

/**
 * Replaces a stored key's record if it is still exactly `expected` (compare-and-set), keeping its
 * key id and position in the indexes but moving it from the `oldWorkspace` index to `newWorkspace`.
 * Returns 1, or 0 when the record changed or vanished in between.
 */
export const KEY_REPLACE = namedScript({
  name: 'key_replace',
  keys: ['byHash', 'oldWorkspace', 'newWorkspace'],
  args: ['hash', 'expected', 'json', 'keyId', 'createdAt'],
  lua: `
if redis.call('HGET', byHash, hash) ~= expected then return 0 end
redis.call('HSET', byHash, hash, json)
redis.call('ZREM', oldWorkspace, keyId)
redis.call('ZADD', newWorkspace, createdAt, keyId)
return 1
`,
});
