/**
 * @module Lua for deleting an agent with its conversations and messages without blocking Redis.
 *
 * Step 1 ({@link AGENT_DELETE}) removes the agent and its index entries atomically and records a
 * pending cascade: from then on reads miss the agent and no conversation can be inserted for it.
 * Step 2 repeats {@link CASCADE_NEXT} (read ≤ N of the agent's conversations) and
 * {@link CASCADE_PURGE} (remove them from every index, UNLINK their message keys) until none are
 * left; the last CASCADE_NEXT clears the pending mark. Each script does bounded work, and UNLINK
 * frees large histories in a background thread, so no single step stalls the server. Two scripts
 * per batch because the keys of a conversation's user index depend on its stored owner (see
 * scripts/conversations.ts), and Redis Cluster requires every key a script touches to be passed
 * in KEYS.
 */
import type { LuaScript } from './script.js';

/**
 * Deletes the agent and its index entries, and marks its cascade pending.
 * KEYS: agent hash, agent index…, cascades set. ARGV: id.
 * Returns `{json or '', pending agent id…}`: every pending cascade (this one included, and any
 * an earlier interrupted delete left behind) so the caller can finish them.
 */
export const AGENT_DELETE: LuaScript = {
  name: 'agent_delete',
  lua: `
local cascades = KEYS[#KEYS]
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  redis.call('HDEL', KEYS[1], ARGV[1])
  for i = 2, #KEYS - 1 do redis.call('ZREM', KEYS[i], ARGV[1]) end
  redis.call('SADD', cascades, ARGV[1])
end
local out = redis.call('SMEMBERS', cascades)
table.insert(out, 1, raw or '')
return out
`,
};

/**
 * The next batch of a pending cascade's conversations (oldest first), with their owners.
 * KEYS: the agent's conversation index, owner hash, cascades set. ARGV: agentId, batch.
 * Returns `{id, owner or '', …}`; empty when done (and then the pending mark is cleared).
 */
export const CASCADE_NEXT: LuaScript = {
  name: 'cascade_next',
  lua: `
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
  return {}
end
local owners = redis.call('HMGET', KEYS[2], unpack(ids))
local out = {}
for i = 1, #ids do
  out[#out + 1] = ids[i]
  out[#out + 1] = owners[i] or ''
end
return out
`,
};

/** Fixed keys of {@link CASCADE_PURGE} before the per-conversation ones. */
export const PURGE_FIXED_KEYS = 8;

/**
 * Removes a batch of conversations and UNLINKs their messages.
 * KEYS: conversation hash, owner hash, all-conversations index, both status indexes, the agent's
 * index and its two status indexes; then per conversation: message hash, message index, and —
 * when it has a user — the user's index and its two status indexes.
 * ARGV: per conversation: id, its owner as CASCADE_NEXT read it ('' for none), `1` when it has a
 * user (and so three user keys) else `0`.
 * A conversation whose owner changed since is skipped (its user keys would be wrong); the next
 * CASCADE_NEXT returns it again. One already gone (a concurrent cascade) counts as removed, so
 * racing cascades both see progress. Returns the number removed.
 */
export const CASCADE_PURGE: LuaScript = {
  name: 'cascade_purge',
  lua: `
local key, removed = ${PURGE_FIXED_KEYS + 1}, 0
for i = 1, #ARGV, 3 do
  local id, expected = ARGV[i], ARGV[i + 1]
  local messages, history = KEYS[key], KEYS[key + 1]
  key = key + 2
  local users = {}
  if ARGV[i + 2] == '1' then
    users = {KEYS[key], KEYS[key + 1], KEYS[key + 2]}
    key = key + 3
  end
  local owner = redis.call('HGET', KEYS[2], id)
  if not owner or owner == expected then
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
    for k = 3, ${PURGE_FIXED_KEYS} do redis.call('ZREM', KEYS[k], id) end
    for _, user in ipairs(users) do redis.call('ZREM', user, id) end
    redis.call('UNLINK', messages, history)
    removed = removed + 1
  end
end
return removed
`,
};
