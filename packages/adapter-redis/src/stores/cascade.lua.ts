/**
 * @module Lua for finishing an agent's cascade delete without blocking Redis.
 *
 * Step 1 (`AGENT_DELETE`, agent-store.lua.ts) removes the agent atomically and records a pending
 * cascade: from then on reads miss the agent and no conversation can be inserted for it. Step 2
 * repeats {@link CASCADE_NEXT} (read ≤ N of the agent's conversations) and {@link CASCADE_PURGE}
 * (remove them from every index, UNLINK their message keys) until none are left; the last
 * CASCADE_NEXT clears the pending mark. Each script does bounded work, and UNLINK frees large
 * histories in a background thread, so no single step stalls the server. Two scripts per batch
 * because the keys of a conversation's user index depend on its stored owner (see
 * conversation-store.lua.ts), and Redis Cluster requires every key a script touches to be
 * passed in KEYS.
 */
import { namedScript } from '../script.js';

/**
 * The next `batch` of a pending cascade's conversations (oldest first), with their owners.
 * Returns `{id, owner or '', …}`; empty when done (and then the pending mark is cleared).
 */
export const CASCADE_NEXT = namedScript({
  name: 'cascade_next',
  keys: ['agentConvs', 'convOwner', 'cascades'],
  args: ['agentId', 'batch'],
  lua: `
local ids = redis.call('ZRANGE', agentConvs, 0, tonumber(batch) - 1)
if #ids == 0 then
  redis.call('SREM', cascades, agentId)
  return {}
end
local owners = redis.call('HMGET', convOwner, unpack(ids))
local out = {}
for i = 1, #ids do
  out[#out + 1] = ids[i]
  out[#out + 1] = owners[i] or ''
end
return out
`,
});

/**
 * Removes a batch of conversations from `conv`, `convOwner` and the `indexes` every one of them
 * may be in (all conversations, by status, the agent's), and UNLINKs their messages. Per
 * conversation i: `ids[i]`, the owner CASCADE_NEXT read (`owners[i]`, '' for none), and in
 * `conversationKeys` its message hash, its history, then `userKeyCounts[i]` (0 or 3) user indexes.
 * A conversation whose owner changed since is skipped (its user keys would be wrong); the next
 * CASCADE_NEXT returns it again. One already gone (a concurrent cascade) counts as removed, so
 * racing cascades both see progress. Returns the number removed.
 */
export const CASCADE_PURGE = namedScript({
  name: 'cascade_purge',
  keys: ['conv', 'convOwner', 'indexes[]', 'conversationKeys[]'],
  args: ['ids[]', 'owners[]', 'userKeyCounts[]'],
  lua: `
local at, removed = 1, 0
for i, id in ipairs(ids) do
  local messages, history = conversationKeys[at], conversationKeys[at + 1]
  at = at + 2
  local users = {}
  for k = 1, tonumber(userKeyCounts[i]) do
    users[k] = conversationKeys[at]
    at = at + 1
  end
  local owner = redis.call('HGET', convOwner, id)
  if not owner or owner == owners[i] then
    redis.call('HDEL', conv, id)
    redis.call('HDEL', convOwner, id)
    for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
    for _, user in ipairs(users) do redis.call('ZREM', user, id) end
    redis.call('UNLINK', messages, history)
    removed = removed + 1
  end
end
return removed
`,
});
