/** @module The rate-limit script: one GCRA hit (gcra.lua.ts), decided and recorded atomically. */
import { LUA_GCRA } from './gcra.lua.js';
import { namedScript } from './script.js';

/**
 * Decides one hit on the key's GCRA `state` at `nowMs` with emission interval `intervalMs` and `limit` (`gcraHit`).
 * Returns `{allowed (0|1), remaining, resetMs, retryAfterMs}`.
 */
export const GCRA_HIT = namedScript({
  name: 'gcra_hit',
  keys: ['state'],
  args: ['nowMs', 'intervalMs', 'limit'],
  lua: `${LUA_GCRA}\nreturn gcraHit(state, tonumber(nowMs), tonumber(intervalMs), tonumber(limit), redis.call)`,
});
