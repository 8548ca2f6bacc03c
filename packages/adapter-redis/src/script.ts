/**
 * @module Lua scripts whose keys and arguments have names, run as ioredis custom commands
 * (EVALSHA, falling back to EVAL when the server does not have the script yet).
 *
 * A script declares the names of its KEYS and ARGV in order; its Lua body reads them as locals of
 * the same names, and a caller passes `{ keys: { conv, msgs }, args: { id, json } }` — so no
 * reader counts positions. A name ending in `[]` is a list: the caller passes an array and the
 * Lua local is a table. List lengths travel as the first ARGV entries, which the generated
 * prelude reads before anything else.
 *
 * Every script can also decide a request's rate limit before its body runs (a "gate",
 * docs/rate-limits.md#one-round-trip): a call with a {@link Gate} names the rate-limit key as an
 * extra last KEY and the GCRA arguments as extra ARGV before the deadline. The script then runs
 * `gcraHit` (gcra.lua.ts) first; refused, it returns `{0, 0, resetMs, retryAfterMs}` and does
 * nothing else; admitted, `{1, remaining, resetMs, 0, <the body's reply>}`. When the rate-limit
 * state cannot be read or written (`OOM`, `NOPERM`), the gate's failure policy decides: open, the
 * body runs and the reply is `{-1, 0, 0, 0, <the body's reply>}`; closed, it is `{-1}`.
 * {@link runScript}'s caller unwraps it. A call without a gate gets the body's reply as it is.
 */
import { LUA_GCRA } from './gcra.lua.js';
import type { RedisClient } from './redis-client.js';

/** A script value as ioredis returns it: bulk strings, integers, nil and nested arrays. */
export type ScriptReply = string | number | null | ScriptReply[];

/** A name without its list marker: `indexes[]` → `indexes`. */
type Bare<N extends string> = N extends `${infer Name}[]` ? Name : N;

/** What a call passes for names `N`: one value per single name, an array per list name. */
export type Named<N extends string, V> = { [P in N as Bare<P>]: P extends `${string}[]` ? readonly V[] : V };

/** A Lua script with named KEYS and ARGV. Every key it touches is one of its KEYS, as Redis Cluster requires. */
export interface LuaScript<K extends string = string, A extends string = string> {
  /** Unique within this package; the ioredis command is `parley_<name>`. */
  name: string;
  keys: readonly K[];
  args: readonly A[];
  /** The full Lua source: the generated prelude, then the body. */
  lua: string;
}

/** The values of one call of a {@link LuaScript}. */
export interface ScriptCall<K extends string, A extends string> {
  keys: Named<K, string>;
  args: Named<A, string | number>;
}

const IDENTIFIER = /^[A-Za-z][A-Za-z0-9]*$/;

/** The error reply of a script that ran after its deadline (see the module's doc). */
export const DEADLINE_REPLY = 'PARLEY_DEADLINE';

const bare = (name: string) => name.replace(/\[\]$/, '');
const isList = (name: string) => name.endsWith('[]');

/**
 * Declares a script: `lua` (the body) runs after `local <name> = KEYS[i]` / `ARGV[j]` for each
 * name in order (a table for `name[]`), as a function, so that a {@link Gate}d call can decide
 * its gate first and return it with the body's reply. Shared Lua helpers are prepended by
 * the caller.
 * @throws TypeError for a name that is not a Lua identifier, or used twice.
 */
export function namedScript<const K extends string, const A extends string>(definition: {
  name: string;
  keys: readonly K[];
  args: readonly A[];
  lua: string;
}): LuaScript<K, A> {
  const { name, keys, args, lua } = definition;
  const names = [...keys, ...args].map(bare);
  if (names.some((each) => !IDENTIFIER.test(each)) || new Set(names).size !== names.length) {
    throw new TypeError(`Script ${name}: names must be distinct Lua identifiers (got ${names.join(', ')}).`);
  }
  const lists = [...keys, ...args].filter(isList).length;
  const prelude = [
    `local _now = redis.call('TIME')`,
    `if tonumber(_now[1]) * 1000 + math.floor(tonumber(_now[2]) / 1000) > tonumber(ARGV[#ARGV]) then`,
    `  return redis.error_reply('${DEADLINE_REPLY} the caller stopped waiting before this script ran: nothing was done')`,
    `end`,
    `local _key, _arg, _len = 0, ${lists}, 0`,
  ];
  const read = (source: 'KEYS' | 'ARGV', cursor: '_key' | '_arg') => (each: string) =>
    isList(each)
      ? `_len = _len + 1\nlocal ${bare(each)} = {}\nfor i = 1, tonumber(ARGV[_len]) do ${cursor} = ${cursor} + 1; ${bare(each)}[i] = ${source}[${cursor}] end`
      : `${cursor} = ${cursor} + 1\nlocal ${each} = ${source}[${cursor}]`;
  prelude.push(...keys.map(read('KEYS', '_key')), ...args.map(read('ARGV', '_arg')));
  // Declared keys used up, one KEY left: the call is gated (see the module's doc).
  const gate = [
    `if #KEYS == _key then return _body() end`,
    LUA_GCRA,
    `local _decision = gcraHit(KEYS[#KEYS], tonumber(ARGV[#ARGV - 4]), tonumber(ARGV[#ARGV - 3]), tonumber(ARGV[#ARGV - 2]), redis.pcall)`,
    // The state cannot be read or written (OOM, NOPERM): the failure policy decides, as when the
    // rate-limit store fails.
    `if not _decision then`,
    `  if ARGV[#ARGV - 1] == '1' then return {-1, 0, 0, 0, _body()} end`,
    `  return {-1}`,
    `end`,
    `if _decision[1] == 1 then _decision[5] = _body() end`,
    `return _decision`,
  ];
  return { name, keys, args, lua: `${prelude.join('\n')}\nlocal function _body()\n${lua}\nend\n${gate.join('\n')}` };
}

/**
 * A rate-limit hit a script decides before its body (see the module's doc): `key` is the GCRA
 * state's STRING, in the slot of the script's other keys; `nowMs` and `intervalMs` are integer ms.
 */
export interface Gate {
  key: string;
  nowMs: number;
  intervalMs: number;
  limit: number;
  /** Whether the body runs when the state cannot be read or written (the failure policy is `'open'`). */
  failOpen: boolean;
}

/** The first KEY of `call` (the one ioredis routes a Cluster call by), if the script has keys. */
export function firstKey<K extends string, A extends string>(
  script: LuaScript<K, A>,
  call: ScriptCall<K, A>,
): string | undefined {
  const name = script.keys[0];
  if (name === undefined) return undefined;
  const value = (call.keys as Record<string, string | readonly string[]>)[bare(name)];
  return typeof value === 'string' ? value : value?.[0];
}

/** `HGET hash field`, for a read that decides a gate (see the module's doc). */
export const FIELD_GET = namedScript({
  name: 'field_get',
  keys: ['hash'],
  args: ['field'],
  lua: `return redis.call('HGET', hash, field)`,
});

/** A declared name, read once: its bare form and whether it is a list. */
interface Slot {
  name: string;
  bare: string;
  list: boolean;
}

/** Per script, its keys and args as {@link Slot}s (every call walks them). */
const slotsOf = new WeakMap<LuaScript, { keys: Slot[]; args: Slot[] }>();

function slots(script: LuaScript): { keys: Slot[]; args: Slot[] } {
  let found = slotsOf.get(script);
  if (found === undefined) {
    const slot = (name: string): Slot => ({ name, bare: bare(name), list: isList(name) });
    slotsOf.set(script, (found = { keys: script.keys.map(slot), args: script.args.map(slot) }));
  }
  return found;
}

/** The KEYS and ARGV arrays of a call, in the script's declared order (list lengths first in ARGV). */
export function positions<K extends string, A extends string>(
  script: LuaScript<K, A>,
  call: ScriptCall<K, A>,
): { keys: string[]; args: Array<string | number> } {
  const keyValues = call.keys as Record<string, string | readonly string[]>;
  const argValues = call.args as Record<string, string | number | ReadonlyArray<string | number>>;
  const declared = slots(script as LuaScript);
  const lengths: Array<string | number> = [];
  const keys: string[] = [];
  const args: Array<string | number> = [];
  for (const { name, bare: key, list } of declared.keys) {
    const value = keyValues[key];
    if (value === undefined) throw new TypeError(`Script ${script.name}: key '${name}' missing.`);
    if (list) {
      lengths.push((value as readonly string[]).length);
      for (const each of value as readonly string[]) keys.push(each);
    } else keys.push(value as string);
  }
  for (const { name, bare: arg, list } of declared.args) {
    const value = argValues[arg];
    if (value === undefined) throw new TypeError(`Script ${script.name}: argument '${name}' missing.`);
    if (list) {
      lengths.push((value as ReadonlyArray<string | number>).length);
      for (const each of value as ReadonlyArray<string | number>) args.push(each);
    } else args.push(value as string | number);
  }
  return { keys, args: lengths.length === 0 ? args : [...lengths, ...args] };
}

type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: Array<string | number>) => Promise<ScriptReply>;

/** Per client, the ioredis command of each script already defined on it. */
const defined = new WeakMap<RedisClient, Map<LuaScript, ScriptCommand>>();

/**
 * Runs `script` on `client` with the named keys and args of `call`: one round trip (EVALSHA; EVAL
 * once per connection the first time). ioredis routes it by the first key's slot, so on a Cluster
 * all keys must share a hash tag. `deadline` is Redis server time in ms: past it the script
 * refuses with {@link DEADLINE_REPLY} and does nothing. With `gate`, the reply is the gate's
 * (see the module's doc).
 */
export function runScript<K extends string, A extends string>(
  client: RedisClient,
  script: LuaScript<K, A>,
  call: ScriptCall<K, A>,
  deadline: number,
  gate?: Gate,
): Promise<ScriptReply> {
  const { keys, args } = positions(script, call);
  if (gate) {
    keys.push(gate.key);
    args.push(gate.nowMs, gate.intervalMs, gate.limit, gate.failOpen ? '1' : '0');
  }
  let commands = defined.get(client);
  if (!commands) defined.set(client, (commands = new Map()));
  let run = commands.get(script as LuaScript);
  if (!run) {
    const command = `parley_${script.name}`;
    // No fixed key count: scripts with list keys take a variable number. ioredis keeps the SHA-1.
    if (!(command in client)) client.defineCommand(command, { lua: script.lua });
    run = (client as unknown as Record<string, ScriptCommand>)[command]!;
    commands.set(script as LuaScript, run);
  }
  args.push(Math.floor(deadline));
  return run.call(client, keys.length, ...keys, ...args);
}

/**
 * Lua helper for scripts that fetch records for a list of ids: HMGET in chunks (Lua's `unpack` is
 * limited to a few thousand values), dropping ids without a record.
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

/**
 * Lua helper for pages read one row past `limit` to learn whether more follow: drops that extra
 * row and returns 1, or returns 0 when there was none. Replies put it first: `{more, row…}`.
 */
export const LUA_PAGE_REPLY = `
local function trimToLimit(rows, limit)
  if #rows > limit then
    rows[#rows] = nil
    return 1
  end
  return 0
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
