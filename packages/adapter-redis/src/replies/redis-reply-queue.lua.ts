/**
 * @module The reply queue's Lua: enqueue, lease, extend and ack are one script each, so a
 * conversation is held by one lease at a time however many workers share the queue. Entries of a
 * conversation's list are `<requestedAt>|<job JSON>`: the time is read with `string.match`, the JSON
 * is never decoded (Lua's cjson rejects lone surrogates).
 */
import { namedScript } from '../script.js';

/** How many expired leases one lease call hands back to `ready`: bounded work per script. */
const RECLAIM_BATCH = 100;

/** Appends an entry to its conversation; a conversation that was empty and is not leased becomes ready. */
export const REPLY_ENQUEUE = namedScript({
  name: 'reply_enqueue',
  keys: ['fifo', 'heads', 'ready', 'leases', 'count'],
  args: ['member', 'entry', 'requestedAt'],
  lua: `
local length = redis.call('RPUSH', fifo, entry)
redis.call('INCR', count)
if length == 1 then
  redis.call('HSET', heads, member, entry)
  if not redis.call('ZSCORE', leases, member) then redis.call('ZADD', ready, requestedAt, member) end
end
return length
`,
});

/**
 * Hands expired leases' conversations back to \`ready\` (score 0: the oldest work goes first), then
 * leases the ready conversation whose head was asked first. Returns {member, entry} or nil.
 */
export const REPLY_LEASE = namedScript({
  name: 'reply_lease',
  keys: ['heads', 'ready', 'leases', 'receipts'],
  args: ['now', 'leaseMs', 'token'],
  lua: `
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, ${RECLAIM_BATCH})
for _, member in ipairs(expired) do
  redis.call('ZREM', leases, member)
  redis.call('HDEL', receipts, member)
  if redis.call('HEXISTS', heads, member) == 1 then redis.call('ZADD', ready, 0, member) end
end
local picked = redis.call('ZRANGE', ready, 0, 0)
if #picked == 0 then return nil end
local member = picked[1]
redis.call('ZREM', ready, member)
local entry = redis.call('HGET', heads, member)
if not entry then return nil end
redis.call('ZADD', leases, tonumber(now) + tonumber(leaseMs), member)
redis.call('HSET', receipts, member, token)
return {member, entry}
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
 * Removes the conversation's head entry under a live lease and frees the conversation: the next
 * entry becomes its head and it becomes ready again (scored by that entry's time). Returns 1, or 0
 * (nothing changed) when the lease was lost.
 */
export const REPLY_ACK = namedScript({
  name: 'reply_ack',
  keys: ['fifo', 'heads', 'ready', 'leases', 'receipts', 'count'],
  args: ['member', 'token', 'now'],
  lua: `
local expires = redis.call('ZSCORE', leases, member)
if redis.call('HGET', receipts, member) ~= token or not expires or tonumber(expires) <= tonumber(now) then return 0 end
redis.call('ZREM', leases, member)
redis.call('HDEL', receipts, member)
redis.call('LPOP', fifo)
redis.call('DECR', count)
local next = redis.call('LINDEX', fifo, 0)
if next then
  redis.call('HSET', heads, member, next)
  redis.call('ZADD', ready, tonumber(string.match(next, '^(%d+)|')), member)
else
  redis.call('HDEL', heads, member)
end
return 1
`,
});
