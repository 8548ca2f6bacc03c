/**
 * @module GCRA in Lua: core's `gcra()` (rate-limit/gcra.ts) as one Lua function, which the
 * rate-limit script and every gated script (script.ts) call.
 *
 * Every value is an integer number of milliseconds (Lua numbers are doubles, exact up to 2^53),
 * computed in the same order as `gcra()`, so the decisions are bit-for-bit the same. The emission
 * interval comes from core's `emissionIntervalMs()` rather than being recomputed here.
 */

/**
 * `gcraHit(state, now, interval, max, call)` decides one hit on `state` (a STRING) at `now`, with
 * emission interval `interval` and limit `max`, and returns `{allowed (0|1), remaining, resetMs,
 * retryAfterMs}`. The STRING holds `<TAT>:<seen>` in ms: the TAT, and the latest `now` a hit
 * was admitted at (a bare `<TAT>`, as earlier versions wrote, counts as never seen). A hit is
 * decided at the later of `now` and `seen`, so the key's clock never runs backwards: several
 * processes stamp their hits before they reach Redis, and one stamped a moment before a hit
 * already decided would otherwise carry an extra millisecond of debt and report one `remaining`
 * too few (the PostgreSQL store does the same; docs/rate-limits.md). An admitted hit stores the new
 * state with a TTL of `resetMs` — once the TAT is past, a missing key means the same (full quota);
 * with a rounded-up interval that can be up to `limit − 1` ms over `periodMs`. A refused hit
 * writes nothing: a hit stamped earlier is refused too. `call` is `redis.call` (an error, e.g.
 * `OOM` or `NOPERM`, fails the script) or `redis.pcall` (then `gcraHit` returns `nil` when the
 * state cannot be read or written).
 *
 * Its parts, for a script deciding several hits on one state with one GET and one SET:
 * `gcraState(stored)` reads the STRING's value (false when missing) as `tat, seen` (numbers, or
 * nil); `gcraStep(tat, seen, now, interval, max)` decides a hit on them without touching Redis and
 * returns the decision and, admitted, the new `tat, seen`; `gcraSet(state, tat, seen, call)`
 * stores them with their TTL (`tat − seen`) and returns what `call` returned.
 */
export const LUA_GCRA = `
local function gcraState(stored)
  if not stored then return nil, nil end
  local tat, seen = string.match(stored, '^(%d+):(%d+)$')
  if tat then return tonumber(tat), tonumber(seen) end
  return tonumber(stored), nil
end
local function gcraStep(tat, seen, now, interval, max)
  local tolerance = (max - 1) * interval
  local start = now
  if tat then
    if seen then now = math.max(now, seen) end
    start = math.max(tat, now)
  end
  if start - now > tolerance then
    return {0, 0, start - now, start - tolerance - now}
  end
  local newTat = start + interval
  local debt = newTat - now
  return {1, math.floor((max * interval - debt) / interval), debt, 0}, newTat, now
end
local function gcraSet(state, tat, seen, call)
  return call('SET', state, string.format('%.0f:%.0f', tat, seen), 'PX', string.format('%.0f', tat - seen))
end
local function gcraHit(state, now, interval, max, call)
  local stored = call('GET', state)
  if type(stored) == 'table' then return nil end
  local tat, seen = gcraState(stored)
  local decision, newTat, newSeen = gcraStep(tat, seen, now, interval, max)
  if newTat and gcraSet(state, newTat, newSeen, call).err then return nil end
  return decision
end
`;
