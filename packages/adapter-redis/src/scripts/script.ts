/**
 * @module Lua scripts as ioredis custom commands: EVALSHA, falling back to EVAL when the server
 * does not have the script yet (after a restart, on a new Cluster node).
 */
import type { RedisClient } from '../connection.js';

/** A Lua script. Every key it touches is passed in KEYS, as Redis Cluster requires. */
export interface LuaScript {
  /** Unique within this package; the ioredis command is `parley_<name>`. */
  name: string;
  lua: string;
}

/** A script value as ioredis returns it: bulk strings, integers, nil and nested arrays. */
export type ScriptReply = string | number | null | ScriptReply[];

type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: Array<string | number>) => Promise<ScriptReply>;

/** Clients already carrying our commands, with the names defined on each. */
const defined = new WeakMap<RedisClient, Set<string>>();

/**
 * Runs `script` on `client` with `keys` and `args`: one round trip (EVALSHA; EVAL once per
 * connection the first time). ioredis routes it by the first key's slot, so on a Cluster all
 * `keys` must share a hash tag.
 */
export function runScript(client: RedisClient, script: LuaScript, keys: readonly string[], args: ReadonlyArray<string | number> = []): Promise<ScriptReply> {
  const command = `parley_${script.name}`;
  let names = defined.get(client);
  if (!names) defined.set(client, (names = new Set()));
  if (!names.has(command)) {
    // No fixed key count: several scripts take a variable number of keys.
    client.defineCommand(command, { lua: script.lua });
    names.add(command);
  }
  const run = (client as unknown as Record<string, ScriptCommand>)[command]!;
  return run.call(client, keys.length, ...keys, ...args);
}

/**
 * Lua helper prepended to scripts that fetch records for a list of ids: HMGET in chunks (Lua's
 * `unpack` is limited to a few thousand values), dropping ids without a record.
 */
export const LUA_FETCH = `
local function fetch(hash, ids)
  local out = {}
  for first = 1, #ids, 1000 do
    local last = math.min(first + 999, #ids)
    local rows = redis.call('HMGET', hash, unpack(ids, first, last))
    for i = 1, #rows do
      if rows[i] then out[#out + 1] = rows[i] end
    end
  end
  return out
end
`;

/** A script's array reply as strings. */
export function strings(reply: ScriptReply): string[] {
  return (reply as ScriptReply[]).map(String);
}

/** Parses JSON records returned by a script; every record is a fresh copy. */
export function records<T>(rows: readonly string[]): T[] {
  return rows.map((row) => JSON.parse(row) as T);
}

/** Splits a `{total, record…}` reply (the page scripts' shape) into `{ items, total }`. */
export function pageReply<T>(reply: ScriptReply): { items: T[]; total: number } {
  const [total, ...rows] = strings(reply);
  return { items: records<T>(rows), total: Number(total ?? 0) };
}
