/**
 * @module The sandbox's plants on Redis: per workspace a HASH (id → JSON) and a ZSET scored by the
 * numeric id, beside Parley's keys under the workspace's tag (so in its Cluster slot). Each method
 * is one Lua script, so one atomic round trip. Plant ids are integers within JavaScript's safe
 * range (≤ 2^53), which a ZSET score (a double) holds exactly, so score order is id order. Runs
 * through the bundle's `redis` (deadline and fault policy of `@parley/adapter-redis`), so nothing
 * here loads a driver.
 */
import type { Plant } from './plant-schemas.js';
import type { PlantStore } from './plant-store.js';

/** What `redisAdapters()` exposes as its `redis` (`RedisConnection` of `@parley/adapter-redis`). */
export interface RedisConnection {
  /** The prefix and hash tag every key of the workspace starts with, e.g. `parley:{ws_1}:`. */
  workspaceTag(workspaceId: string): string;
  /** Runs `lua` (EVAL) with `keys` as KEYS and `args` as ARGV; resolves with its reply. */
  eval(lua: string, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
}

/**
 * Adds the plants (ARGV: ids, then their JSON, in two halves) the first time it runs for a
 * workspace (the `seeded` flag is set with SET NX in the same step); later calls do nothing, even
 * once the plants were deleted.
 */
const SEED = `
local seeded, plant, plants = KEYS[1], KEYS[2], KEYS[3]
if not redis.call('SET', seeded, '1', 'NX') then return 0 end
local n = #ARGV / 2
for i = 1, n do
  redis.call('HSET', plant, ARGV[i], ARGV[n + i])
  redis.call('ZADD', plants, ARGV[i], ARGV[i])
end
return 1
`;

/** Plants in ascending id order, at most ARGV[1] (-1 for all), as JSON; HMGET in chunks (Lua's unpack limit). */
const LIST = `
local plants, plant, count = KEYS[1], KEYS[2], tonumber(ARGV[1])
if count == 0 then return {} end
local ids = redis.call('ZRANGE', plants, 0, count < 0 and -1 or count - 1)
local out = {}
for first = 1, #ids, 1000 do
  local rows = redis.call('HMGET', plant, unpack(ids, first, math.min(first + 999, #ids)))
  for i = 1, #rows do
    if rows[i] then out[#out + 1] = rows[i] end
  end
end
return out
`;

/** Stores a plant unless one with its id exists. Returns 1, or 0 (nothing written). */
const INSERT = `
local plant, plants, id = KEYS[1], KEYS[2], ARGV[1]
if redis.call('HSETNX', plant, id, ARGV[2]) == 0 then return 0 end
redis.call('ZADD', plants, id, id)
return 1
`;

/** Deletes a plant and its index entry. Returns 1, or 0 when there was none. */
const DELETE = `
local plant, plants, id = KEYS[1], KEYS[2], ARGV[1]
if redis.call('HDEL', plant, id) == 0 then return 0 end
redis.call('ZREM', plants, id)
return 1
`;

/** A {@link PlantStore} over `redis`. Keys are those earlier versions used, so stored plants stay. */
export function redisPlantStore(redis: RedisConnection): PlantStore {
  const keys = (workspaceId: string) => {
    const tag = redis.workspaceTag(workspaceId);
    return { plant: `${tag}plant`, plants: `${tag}plants`, seeded: `${tag}plants:seeded` };
  };
  return {
    seed: async (workspaceId, plants) => {
      const { seeded, plant, plants: index } = keys(workspaceId);
      const ids = plants.map((each) => String(each.id));
      await redis.eval(SEED, [seeded, plant, index], [...ids, ...plants.map((each) => JSON.stringify(each))]);
    },
    list: async (workspaceId, limit) => {
      const { plant, plants } = keys(workspaceId);
      const rows = (await redis.eval(LIST, [plants, plant], [limit ?? -1])) as string[];
      return rows.map((row) => JSON.parse(row) as Plant);
    },
    insert: async (workspaceId, plant) => {
      const { plant: records, plants } = keys(workspaceId);
      return (await redis.eval(INSERT, [records, plants], [String(plant.id), JSON.stringify(plant)])) === 1;
    },
    delete: async (workspaceId, id) => {
      const { plant, plants } = keys(workspaceId);
      return (await redis.eval(DELETE, [plant, plants], [String(id)])) === 1;
    },
  };
}
