/**
 * @module GCRA in Lua: core's `gcra()` (rate-limit/gcra.ts) decided and recorded in one atomic
 * script, so concurrent callers across processes never see the same state.
 *
 * Every value is an integer number of milliseconds (Lua numbers are doubles, exact up to 2^53),
 * computed in the same order as `gcra()`, so the decisions are bit-for-bit the same. The emission
 * interval comes from core's `emissionIntervalMs()` rather than being recomputed here.
 */
import type { LuaScript } from './script.js';

/**
 * Decides one hit. KEYS: the rate-limit key (a STRING holding the TAT in ms).
 * ARGV: nowMs, emission interval T in ms, limit.
 * Returns `{allowed (0|1), remaining, resetMs, retryAfterMs}`. An admitted hit stores the new TAT
 * with a TTL of `resetMs` — once the TAT is past, a missing key means the same (full quota); with
 * a rounded-up interval that can be up to `limit − 1` ms over `periodMs`. A refused hit writes
 * nothing.
 */
export const GCRA_HIT: LuaScript = {
  name: 'gcra_hit',
  lua: `
local now, interval, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tolerance = (limit - 1) * interval
local stored = redis.call('GET', KEYS[1])
local start = now
if stored then start = math.max(tonumber(stored), now) end
if start - now > tolerance then
  return {0, 0, start - now, start - tolerance - now}
end
local tat = start + interval
local debt = tat - now
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', string.format('%.0f', debt))
return {1, math.floor((limit * interval - debt) / interval), debt, 0}
`,
};
