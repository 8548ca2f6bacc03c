/**
 * @module The reply queue's Lua: enqueue, lease, extend, reroute and ack are one script each, so a
 * conversation is held by one lease at a time however many workers share the queue. Entries of a
 * conversation's list are `<requestedAt>|<route>|<job JSON>`, the route being the job's model
 * URI-encoded (so it holds no `|` or `{`); an entry of Parley 0.1 is `<requestedAt>|<job JSON>`
 * and has the route `''`, which every lease claims. The time and route are read with
 * `string.match`; the JSON is never decoded (Lua's cjson rejects lone surrogates).
 */
import { namedScript } from '../script.js';

/** How many expired leases one lease call hands back to the ready sets: bounded work per script. */
const RECLAIM_BATCH = 100;

/**
 * Helpers over a conversation's head entry. A ready conversation (a head and no lease) is in
 * `asked` (score: the head's request time) and in `routed` as `<route>|<15-digit time>|<member>`
 * (all scores 0, so ZRANGEBYLEX on the `<route>|` prefix finds a route's oldest head in O(log n)).
 */
const HEADS = `
local function parse(entry)
  local at, rest = string.match(entry, '^(%d+)|(.*)$')
  return at, string.match(rest, '^([^|{]*)|') or ''
end
local function routedMember(entry, member)
  local at, route = parse(entry)
  return route .. '|' .. string.rep('0', 15 - #at) .. at .. '|' .. member
end
local function makeReady(member, entry)
  redis.call('ZADD', asked, tonumber((parse(entry))), member)
  redis.call('ZADD', routed, 0, routedMember(entry, member))
end
`;

/** Appends an entry to its conversation; a conversation that was empty and is not leased becomes ready. */
export const REPLY_ENQUEUE = namedScript({
  name: 'reply_enqueue',
  keys: ['fifo', 'heads', 'asked', 'routed', 'leases', 'count'],
  args: ['member', 'entry'],
  lua: `${HEADS}
local length = redis.call('RPUSH', fifo, entry)
redis.call('INCR', count)
if length == 1 then
  redis.call('HSET', heads, member, entry)
  if not redis.call('ZSCORE', leases, member) then makeReady(member, entry) end
end
return length
`,
});

/**
 * Hands expired leases' conversations back to the ready sets, then leases the ready conversation
 * whose head was asked first among: the oldest head of each claimed route (\`routes\`, one
 * ZRANGEBYLEX each), the oldest head of all when asked before \`askedBefore\` (0: none), and the
 * oldest of Parley 0.1's \`legacy\` set (its old ready ZSET, drained here, never added to).
 * Returns {member, entry, 1 when the entry was cancelled under an earlier lease else 0} or nil.
 */
export const REPLY_LEASE = namedScript({
  name: 'reply_lease',
  keys: ['heads', 'asked', 'routed', 'legacy', 'leases', 'receipts', 'cancelled'],
  args: ['now', 'leaseMs', 'token', 'askedBefore', 'routes[]'],
  lua: `${HEADS}
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, ${RECLAIM_BATCH})
for _, member in ipairs(expired) do
  redis.call('ZREM', leases, member)
  redis.call('HDEL', receipts, member)
  local head = redis.call('HGET', heads, member)
  if head then makeReady(member, head) end
end
local best, bestAt
local function consider(member, at)
  if member and (not best or at < bestAt) then best, bestAt = member, at end
end
for _, route in ipairs(routes) do
  local found = redis.call('ZRANGEBYLEX', routed, '(' .. route .. '|', '(' .. route .. '}', 'LIMIT', 0, 1)[1]
  if found then
    local at, member = string.match(found, '^[^|]*|(%d+)|(.*)$')
    consider(member, tonumber(at))
  end
end
local oldest = redis.call('ZRANGE', asked, 0, 0, 'WITHSCORES')
if oldest[1] and tonumber(oldest[2]) < tonumber(askedBefore) then consider(oldest[1], tonumber(oldest[2])) end
local old = redis.call('ZRANGE', legacy, 0, 0, 'WITHSCORES')
if old[1] then consider(old[1], tonumber(old[2])) end
if not best then return nil end
local entry = redis.call('HGET', heads, best)
redis.call('ZREM', legacy, best)
redis.call('ZREM', asked, best)
if entry then redis.call('ZREM', routed, routedMember(entry, best)) end
-- A ready mark left beside a live lease (a Parley 0.1 process reclaiming alongside): dropped, not leased twice.
if not entry or redis.call('ZSCORE', leases, best) then return nil end
redis.call('ZADD', leases, tonumber(now) + tonumber(leaseMs), best)
redis.call('HSET', receipts, best, token)
return {best, entry, redis.call('HEXISTS', cancelled, best)}
`,
});

/** Renews a live lease (its token still held, not expired). Returns 1, or 0 when it was lost. */
export const REPLY_EXTEND = namedScript({
  name: 'reply_extend',
  keys: ['leases', 'receipts'],
  args: ['member', 'token', 'now', 'leaseMs'],
  lua: `
local expires = redis.call('ZSCORE', leases, member)
if redis.call('HGET', receipts, member) ~= token or not expires or tonumber(expires) <= tonumber(now) then return 0 end
redis.call('ZADD', leases, tonumber(now) + tonumber(leaseMs), member)
return 1
`,
});

/**
 * Under a live lease, replaces the conversation's head entry with `entry` (the same job with
 * another model and route) and ends the lease, leaving the conversation ready for that route.
 * Returns 1, or 0 (nothing changed) when the lease was lost.
 */
export const REPLY_REROUTE = namedScript({
  name: 'reply_reroute',
  keys: ['fifo', 'heads', 'asked', 'routed', 'leases', 'receipts'],
  args: ['member', 'token', 'now', 'entry'],
  lua: `${HEADS}
local expires = redis.call('ZSCORE', leases, member)
if redis.call('HGET', receipts, member) ~= token or not expires or tonumber(expires) <= tonumber(now) then return 0 end
redis.call('ZREM', leases, member)
redis.call('HDEL', receipts, member)
redis.call('LSET', fifo, 0, entry)
redis.call('HSET', heads, member, entry)
makeReady(member, entry)
return 1
`,
});

/**
 * Removes the conversation's head entry under a live lease and frees the conversation: the next
 * entry becomes its head and it becomes ready again (for that entry's route). Returns 1, or 0
 * (nothing changed) when the lease was lost.
 */
export const REPLY_ACK = namedScript({
  name: 'reply_ack',
  keys: ['fifo', 'heads', 'asked', 'routed', 'leases', 'receipts', 'count', 'cancelled'],
  args: ['member', 'token', 'now'],
  lua: `${HEADS}
local expires = redis.call('ZSCORE', leases, member)
if redis.call('HGET', receipts, member) ~= token or not expires or tonumber(expires) <= tonumber(now) then return 0 end
redis.call('ZREM', leases, member)
redis.call('HDEL', receipts, member)
redis.call('HDEL', cancelled, member)
redis.call('LPOP', fifo)
redis.call('DECR', count)
local next = redis.call('LINDEX', fifo, 0)
if next then
  redis.call('HSET', heads, member, next)
  makeReady(member, next)
else
  redis.call('HDEL', heads, member)
end
return 1
`,
});

/**
 * Stops a conversation's replies (docs/replies-and-streams.md#stopping-a-reply). Under a live
 * lease the head stays, marked in \`cancelled\` (member → 1) for its worker, and the entries behind
 * it are removed; otherwise (no lease, or one that ended) every entry goes, the head and its ready
 * marks with it. Returns {removed entries, the head entry when newly marked (else empty)}.
 */
export const REPLY_CANCEL = namedScript({
  name: 'reply_cancel',
  keys: ['fifo', 'heads', 'asked', 'routed', 'legacy', 'leases', 'receipts', 'count', 'cancelled'],
  args: ['member', 'now'],
  lua: `${HEADS}
local entries = redis.call('LRANGE', fifo, 0, -1)
if #entries == 0 then return {{}, {}} end
local expires = redis.call('ZSCORE', leases, member)
local removed, running = {}, {}
if expires and tonumber(expires) > tonumber(now) then
  if redis.call('HSETNX', cancelled, member, 1) == 1 then running[1] = entries[1] end
  for i = 2, #entries do removed[#removed + 1] = entries[i] end
  redis.call('LTRIM', fifo, 0, 0)
else
  removed = entries
  local head = redis.call('HGET', heads, member)
  if head then redis.call('ZREM', routed, routedMember(head, member)) end
  redis.call('ZREM', asked, member)
  redis.call('ZREM', legacy, member)
  redis.call('ZREM', leases, member)
  redis.call('HDEL', receipts, member)
  redis.call('HDEL', heads, member)
  redis.call('HDEL', cancelled, member)
  redis.call('DEL', fifo)
end
if #removed > 0 then redis.call('DECRBY', count, #removed) end
return {removed, running}
`,
});

/** Of the leases named (members[i] with tokens[i]), the indexes (1-based) of the live ones whose head was cancelled. */
export const REPLY_CANCELLED = namedScript({
  name: 'reply_cancelled',
  keys: ['leases', 'receipts', 'cancelled'],
  args: ['now', 'members[]', 'tokens[]'],
  lua: `
local found = {}
for i, member in ipairs(members) do
  local expires = redis.call('ZSCORE', leases, member)
  if redis.call('HEXISTS', cancelled, member) == 1 and redis.call('HGET', receipts, member) == tokens[i]
    and expires and tonumber(expires) > tonumber(now) then
    found[#found + 1] = i
  end
end
return found
`,
});
