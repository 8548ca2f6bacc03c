/**
 * @module Lua for the plants sandbox: a HASH (id → JSON) and a ZSET scored by the numeric id.
 * Plant ids are integers within JavaScript's safe range (≤ 2^53), which a ZSET score (a double)
 * holds exactly, so score order is id order.
 */
import { LUA_FETCH, type LuaScript } from './script.js';

/**
 * Adds the plants the first time it runs for a workspace (a flag set with SET NX in the same
 * step); later calls do nothing, even once the plants were deleted.
 * KEYS: seeded flag, plant hash, plant index. ARGV: id, json, id, json, ….
 * Returns 1 when it seeded, 0 when the workspace was seeded before.
 */
export const PLANT_SEED: LuaScript = {
  name: 'plant_seed',
  lua: `
if not redis.call('SET', KEYS[1], '1', 'NX') then return 0 end
for i = 1, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i])
end
return 1
`,
};

/**
 * Stores a plant unless one with its id exists. KEYS: plant hash, plant index. ARGV: id, json.
 * Returns 1, or 0 (nothing written).
 */
export const PLANT_INSERT: LuaScript = {
  name: 'plant_insert',
  lua: `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[1])
return 1
`,
};

/**
 * Plants in ascending id order. KEYS: plant index, plant hash. ARGV: limit (-1 for all).
 * Returns the JSON records.
 */
export const PLANT_LIST: LuaScript = {
  name: 'plant_list',
  lua: `${LUA_FETCH}
local limit = tonumber(ARGV[1])
if limit == 0 then return {} end
return fetch(KEYS[2], redis.call('ZRANGE', KEYS[1], 0, limit < 0 and -1 or limit - 1))
`,
};
