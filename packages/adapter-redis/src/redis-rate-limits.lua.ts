/** @module The rate-limit script: one GCRA hit (gcra.lua.ts), decided and recorded atomically. */
import { LUA_GCRA } from './gcra.lua.js';
import { namedScript } from './script.js';

/**
 * Decides one hit on `tat` at `nowMs` with emission interval `intervalMs` and `limit` (`gcraHit`).
 * Returns `{allowed (0|1), remaining, resetMs, retryAfterMs}`.
 */
export const GCRA_HIT = namedScript({
  name: 'gcra_hit',
  keys: ['tat'],
  args: ['nowMs', 'intervalMs', 'limit'],
  lua: `${LUA_GCRA}\nreturn gcraHit(tat, tonumber(nowMs), tonumber(intervalMs), tonumber(limit), redis.call)`,
});
