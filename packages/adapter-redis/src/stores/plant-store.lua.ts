/**
 * @module Lua for the plants sandbox: a HASH (id → JSON) and a ZSET scored by the numeric id.
 * Plant ids are integers within JavaScript's safe range (≤ 2^53), which a ZSET score (a double)
 * holds exactly, so score order is id order.
 */
import { LUA_FETCH, namedScript } from '../script.js';

/**
 * Adds the plants (`ids[i]` with `jsons[i]`) the first time it runs for a workspace (the `seeded`
 * flag is set with SET NX in the same step); later calls do nothing, even once the plants were
 * deleted. Returns 1 when it seeded, 0 when the workspace was seeded before.
 */
export const PLANT_SEED = namedScript({
  name: 'plant_seed',
  keys: ['seeded', 'plant', 'plants'],
  args: ['ids[]', 'jsons[]'],
  lua: `
if not redis.call('SET', seeded, '1', 'NX') then return 0 end
for i, id in ipairs(ids) do
  redis.call('HSET', plant, id, jsons[i])
  redis.call('ZADD', plants, id, id)
end
return 1
`,
});

/** Stores a plant unless one with its id exists. Returns 1, or 0 (nothing written). */
export const PLANT_INSERT = namedScript({
  name: 'plant_insert',
  keys: ['plant', 'plants'],
  args: ['id', 'json'],
  lua: `
if redis.call('HSETNX', plant, id, json) == 0 then return 0 end
redis.call('ZADD', plants, id, id)
return 1
`,
});

/** Plants in ascending id order, at most `limit` (-1 for all). Returns the JSON records. */
export const PLANT_LIST = namedScript({
  name: 'plant_list',
  keys: ['plants', 'plant'],
  args: ['limit'],
  lua: `${LUA_FETCH}
local count = tonumber(limit)
if count == 0 then return {} end
return fetch(plant, redis.call('ZRANGE', plants, 0, count < 0 and -1 or count - 1))
`,
});

/** Deletes a plant and its index entry. Returns 1, or 0 when there was none. */
export const PLANT_DELETE = namedScript({
  name: 'plant_delete',
  keys: ['plant', 'plants'],
  args: ['id'],
  lua: `
if redis.call('HDEL', plant, id) == 0 then return 0 end
redis.call('ZREM', plants, id)
return 1
`,
});
