/**
 * @module The delivery queue's Lua: each call that moves a job (enqueue, lease, ack, retry,
 * promotion of due retries) is one script, so it is atomic however many workers share the queue.
 * Job JSON is moved as an opaque string, never decoded (Lua's cjson rejects lone surrogates).
 */
import { namedScript } from '../script.js';

/** Creates the stream with its consumer group (reading from its start) the first time it is used. */
const LUA_ENSURE_GROUP = `
local function ensureGroup(stream)
  if redis.call('EXISTS', stream) == 0 then
    redis.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
  end
end
`;

/** Moves up to `limit` retries due at `now` from the ZSET into the retry stream, in due order. */
const LUA_PROMOTE = `
local function promote(scheduled, retry, now, limit)
  local due = redis.call('ZRANGEBYSCORE', scheduled, '-inf', now, 'LIMIT', 0, limit)
  for i = 1, #due do
    redis.call('XADD', retry, '*', 'job', due[i])
  end
  if #due > 0 then redis.call('ZREM', scheduled, unpack(due)) end
  return #due
end
`;

/** Appends each job JSON of `jobs` to the `first` stream. Returns how many. */
export const QUEUE_ENQUEUE = namedScript({
  name: 'delivery_enqueue',
  keys: ['stream'],
  args: ['group', 'jobs[]'],
  lua: `${LUA_ENSURE_GROUP}
ensureGroup(stream)
for _, job in ipairs(jobs) do
  redis.call('XADD', stream, '*', 'job', job)
end
return #jobs
`,
});

/** Promotes due retries (up to `limit`). Returns how many. */
export const QUEUE_PROMOTE = namedScript({
  name: 'delivery_promote',
  keys: ['scheduled', 'retry'],
  args: ['group', 'now', 'limit'],
  lua: `${LUA_ENSURE_GROUP}${LUA_PROMOTE}
ensureGroup(retry)
return promote(scheduled, retry, now, tonumber(limit))
`,
});

/**
 * Leases up to `max` jobs of one lane for `consumer`, without waiting: first, when `reclaim` is
 * `1`, entries whose lease ran out (idle longer than `leaseMs`, found by XAUTOCLAIM from `cursor`,
 * at most 10 steps), then new ones (XREADGROUP `>`). With `promoteLimit` > 0 (the retry lane) it
 * first promotes due retries into `stream`. Returns `{next cursor, id, job JSON, id, job JSON, …}`
 * (the cursor as given when it did not reclaim).
 */
export const QUEUE_LEASE = namedScript({
  name: 'delivery_lease',
  keys: ['stream', 'scheduled'],
  args: ['group', 'consumer', 'leaseMs', 'max', 'cursor', 'reclaim', 'now', 'promoteLimit'],
  lua: `${LUA_ENSURE_GROUP}${LUA_PROMOTE}
ensureGroup(stream)
if tonumber(promoteLimit) > 0 then promote(scheduled, stream, now, tonumber(promoteLimit)) end
local want = tonumber(max)
local out = {cursor}
local count = 0
local function take(entries)
  for i = 1, #entries do
    local entry = entries[i]
    -- Redis 6.2 lists a pending entry deleted from the stream with no fields; it holds no job.
    if entry and entry[2] then
      out[#out + 1] = entry[1]
      out[#out + 1] = entry[2][2]
      count = count + 1
    end
  end
end
if reclaim == '1' then
  for step = 1, 10 do
    local claimed = redis.call('XAUTOCLAIM', stream, group, consumer, leaseMs, out[1], 'COUNT', want - count)
    out[1] = claimed[1]
    take(claimed[2])
    if count >= want or out[1] == '0-0' then break end
  end
end
if count < want then
  local read = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', want - count, 'STREAMS', stream, '>')
  if read then take(read[1][2]) end
end
return out
`,
});

/**
 * Acks entries `ids` of one stream and deletes them; an entry acked or rescheduled already is
 * left as it is. Returns how many were still there. XDEL and XACK answer 0 for a stream (or
 * group) that does not exist, so neither needs a check first.
 */
export const QUEUE_ACK = namedScript({
  name: 'delivery_ack',
  keys: ['stream'],
  args: ['group', 'ids[]'],
  lua: `
local removed = redis.call('XDEL', stream, unpack(ids))
redis.call('XACK', stream, group, unpack(ids))
return removed
`,
});

/**
 * Acks and deletes entry `id` and schedules `job` (JSON) at `dueAt` (ms) — only if the entry was
 * still there, so the first ack or retry of a job wins. Returns 1 when it scheduled, else 0.
 */
export const QUEUE_RETRY = namedScript({
  name: 'delivery_retry',
  keys: ['stream', 'scheduled'],
  args: ['group', 'id', 'dueAt', 'job'],
  lua: `
local removed = redis.call('XDEL', stream, id)
redis.call('XACK', stream, group, id)
if removed == 0 then return 0 end
-- A job JSON already scheduled (the same job from a duplicated entry) is kept once.
redis.call('ZADD', scheduled, dueAt, job)
return 1
`,
});

/**
 * Counts `{first ready, retry ready, scheduled, leased}`: a stream's ready entries are its length
 * minus its pending (leased) entries, since entries are deleted when acked; retries due at `now`
 * but not promoted yet count as ready. O(1) per figure but for XPENDING's per-consumer summary.
 */
export const QUEUE_STATS = namedScript({
  name: 'delivery_stats',
  keys: ['first', 'retry', 'scheduled'],
  args: ['group', 'now'],
  lua: `
local function counts(stream)
  if redis.call('EXISTS', stream) == 0 then return 0, 0 end
  local pending = redis.call('XPENDING', stream, group)[1]
  return redis.call('XLEN', stream) - pending, pending
end
local firstReady, firstLeased = counts(first)
local retryReady, retryLeased = counts(retry)
local total = redis.call('ZCARD', scheduled)
local due = redis.call('ZCOUNT', scheduled, '-inf', now)
return {firstReady, retryReady + due, total - due, firstLeased + retryLeased}
`,
});

/**
 * Removes consumers that hold no lease from both groups: `consumer` (this instance, closing; ''
 * for none), and any other idle longer than `idleMs` (instances that died without closing). A consumer with
 * pending entries is kept: deleting it would drop them from the group unacked. Returns how many.
 */
export const QUEUE_FORGET_CONSUMERS = namedScript({
  name: 'delivery_forget_consumers',
  keys: ['first', 'retry'],
  args: ['group', 'consumer', 'idleMs'],
  lua: `
local removed = 0
for _, stream in ipairs({first, retry}) do
  if redis.call('EXISTS', stream) == 1 then
    for _, info in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
      local fields = {}
      for i = 1, #info, 2 do fields[info[i]] = info[i + 1] end
      if fields.pending == 0 and (fields.name == consumer or fields.idle > tonumber(idleMs)) then
        redis.call('XGROUP', 'DELCONSUMER', stream, group, fields.name)
        removed = removed + 1
      end
    end
  end
end
return removed
`,
});
