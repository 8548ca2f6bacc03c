/**
 * @module Lua scripts whose keys and arguments have names: the script reads `stream`, not
 * `KEYS[1]`, and the caller passes `{ keys: { stream }, args: { id } }`, so no reader counts positions.
 */
import type { RedisRunner } from '../connection.js';
import type { LuaScript, ScriptReply } from './script.js';

/** A {@link LuaScript} declaring the names of its KEYS and ARGV, in order. */
export interface NamedScript<K extends string, A extends string> extends LuaScript {
  keys: readonly K[];
  args: readonly A[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Declares a script: its Lua body runs after `local <key> = KEYS[i]` and `local <arg> = ARGV[j]`
 * for each name, in order. Arguments after the named ones (a variable number of records) start at
 * `ARGV[REST]`, where `REST` is a Lua local too.
 * @throws TypeError for a name that is not a Lua identifier, or used twice.
 */
export function namedScript<const K extends string, const A extends string>(definition: {
  name: string;
  keys: readonly K[];
  args: readonly A[];
  lua: string;
}): NamedScript<K, A> {
  const { name, keys, args, lua } = definition;
  const names = [...keys, ...args, 'REST'];
  if (names.some((each) => !IDENTIFIER.test(each)) || new Set(names).size !== names.length) {
    throw new TypeError(`Script ${name}: names must be distinct Lua identifiers (got ${names.join(', ')}).`);
  }
  const locals = [
    ...keys.map((key, i) => `local ${key} = KEYS[${i + 1}]`),
    ...args.map((arg, i) => `local ${arg} = ARGV[${i + 1}]`),
    `local REST = ${args.length + 1}`,
  ];
  return { name, keys, args, lua: `${locals.join('\n')}\n${lua}` };
}

/** What a call of a {@link NamedScript} passes: every key and argument by name, then `rest`. */
export interface NamedCall<K extends string, A extends string> {
  keys: Record<K, string>;
  args: Record<A, string | number>;
  rest?: ReadonlyArray<string | number>;
}

/** Runs `script` through `runner` (one round trip, under its deadline), placing each named value. */
export function runNamed<K extends string, A extends string>(
  runner: RedisRunner,
  script: NamedScript<K, A>,
  call: NamedCall<K, A>,
): Promise<ScriptReply> {
  const keys = script.keys.map((key) => call.keys[key]);
  const args = [...script.args.map((arg) => call.args[arg]), ...(call.rest ?? [])];
  return runner.script(script, keys, args);
}
