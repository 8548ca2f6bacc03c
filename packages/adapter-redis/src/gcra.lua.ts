/**
 * @module GCRA in Lua: core's `gcra()` (rate-limit/gcra.ts) as one Lua function, which the
 * rate-limit script and every script deciding an admission (script.ts) call.
 *
 * Every value is an integer number of milliseconds (Lua numbers are doubles, exact up to 2^53),
 * computed in the same order as `gcra()`, so the decisions are bit-for-bit the same. The emission
 * interval comes from core's `emissionIntervalMs()` rather than being recomputed here.
 */

/**
 * `gcraHit(tat, now, interval, max, call)` decides one hit on `tat` (a STRING holding the TAT in
 * ms) at `now`, with emission interval `interval` and limit `max`, and returns `{allowed (0|1),
 * remaining, resetMs, retryAfterMs}`. An admitted hit stores the new TAT with a TTL of `resetMs` —
 * once the TAT is past, a missing key means the same (full quota); with a rounded-up interval that
 * can be up to `limit − 1` ms over `periodMs`. A refused hit writes nothing. `call` is
 * `redis.call` (an error, e.g. `OOM` or `NOPERM`, fails the script) or `redis.pcall` (then
 * `gcraHit` returns `nil` when the state cannot be read or written).
 */
export const LUA_GCRA = `
local function gcraHit(tat, now, interval, max, call)
  local tolerance = (max - 1) * interval
  local stored = call('GET', tat)
  if type(stored) == 'table' then return nil end
  local start = now
  if stored then start = math.max(tonumber(stored), now) end
  if start - now > tolerance then
    return {0, 0, start - now, start - tolerance - now}
  end
  local newTat = start + interval
  local debt = newTat - now
  if call('SET', tat, string.format('%.0f', newTat), 'PX', string.format('%.0f', debt)).err then return nil end
  return {1, math.floor((max * interval - debt) / interval), debt, 0}
end
`;
