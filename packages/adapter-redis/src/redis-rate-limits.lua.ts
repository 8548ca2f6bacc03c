/**
 * @module GCRA in Lua: core's `gcra()` (rate-limit/gcra.ts) decided and recorded in one atomic
 * script, so concurrent callers across processes never see the same state.
 *
 * Every value is an integer number of milliseconds (Lua numbers are doubles, exact up to 2^53),
 * computed in the same order as `gcra()`, so the decisions are bit-for-bit the same. The emission
 * interval comes from core's `emissionIntervalMs()` rather than being recomputed here.
 */
import { namedScript } from './script.js';

/**
 * Decides one hit on `tat` (a STRING holding the TAT in ms) at `nowMs`, with emission interval
 * `intervalMs` and `limit`. Returns `{allowed (0|1), remaining, resetMs, retryAfterMs}`. An
 * admitted hit stores the new TAT with a TTL of `resetMs` — once the TAT is past, a missing key
 * means the same (full quota); with a rounded-up interval that can be up to `limit − 1` ms over
 * `periodMs`. A refused hit writes nothing.
 */
export const GCRA_HIT = namedScript({
  name: 'gcra_hit',
  keys: ['tat'],
  args: ['nowMs', 'intervalMs', 'limit'],
  lua: `
local now, interval, max = tonumber(nowMs), tonumber(intervalMs), tonumber(limit)
local tolerance = (max - 1) * interval
local stored = redis.call('GET', tat)
local start = now
if stored then start = math.max(tonumber(stored), now) end
if start - now > tolerance then
  return {0, 0, start - now, start - tolerance - now}
end
local newTat = start + interval
local debt = newTat - now
redis.call('SET', tat, string.format('%.0f', newTat), 'PX', string.format('%.0f', debt))
return {1, math.floor((max * interval - debt) / interval), debt, 0}
`,
});
