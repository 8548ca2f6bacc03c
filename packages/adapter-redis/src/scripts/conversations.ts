/**
 * @module Lua for conversations: insert only under an existing agent, replace with index moves,
 * and lists filtered by two indexes at once.
 *
 * Which agent and user indexes a conversation is in depends on its stored agent and user, its
 * "owner". Each conversation's owner is kept beside its record, in the owner hash, as the string
 * `conversationOwner()` (conversation-store.ts) builds, so scripts compare owners as plain strings
 * and never decode the record: Lua's cjson rejects the lone UTF-16 surrogates (`"\ud800"`) that
 * JSON.stringify writes and a JSON body may carry.
 */
import { LUA_FETCH, type LuaScript } from './script.js';

/**
 * Stores a conversation if its agent exists — in the same atomic step, so a concurrent agent
 * delete either sees it (and removes it) or makes this insert fail.
 * KEYS: agent hash, conversation hash, owner hash, index…. ARGV: agentId, id, json, owner.
 * Returns 1, or 0 (nothing written) when the agent does not exist.
 */
export const CONVERSATION_INSERT: LuaScript = {
  name: 'conversation_insert',
  lua: `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
for i = 4, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[2]) end
return 1
`,
};

/**
 * Replaces an existing conversation and moves it between indexes.
 * KEYS: conversation hash, owner hash, then `leaveCount` indexes to leave (every index but the
 * all-conversations one of the expected owner), then indexes to join.
 * ARGV: id, json, leaveCount, expected owner, new owner, and the KEYS position of the status
 * index the conversation must be in (0: no status condition).
 * Returns 1 (replaced), 0 (absent, or not in that status index: nothing written), or the stored
 * owner when it differs from the expected one (nothing written: the caller retries with the
 * right keys).
 */
export const CONVERSATION_REPLACE: LuaScript = {
  name: 'conversation_replace',
  lua: `
local owner = redis.call('HGET', KEYS[2], ARGV[1])
if not owner then return 0 end
if owner ~= ARGV[4] then return owner end
local status_index = tonumber(ARGV[6])
if status_index > 0 and not redis.call('ZSCORE', KEYS[status_index], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[5])
local leave = tonumber(ARGV[3])
for i = 3, 2 + leave do redis.call('ZREM', KEYS[i], ARGV[1]) end
for i = 3 + leave, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
return 1
`,
};

/**
 * One page of the intersection of two indexes, newest first: walks the smaller index in rank
 * order and keeps members also in the other (ZSCORE, O(1)). Cost O(min(|A|, |B|)) — the total
 * needs every match counted. KEYS: index A, index B, hash. ARGV: offset, limit.
 * Returns `{total, record…}`.
 */
export const INTERSECTION_PAGE: LuaScript = {
  name: 'intersection_page',
  lua: `${LUA_FETCH}
local small, large = KEYS[1], KEYS[2]
if redis.call('ZCARD', small) > redis.call('ZCARD', large) then small, large = large, small end
local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local total, ids, start = 0, {}, 0
while true do
  local chunk = redis.call('ZRANGE', small, start, start + 999, 'REV')
  if #chunk == 0 then break end
  for _, id in ipairs(chunk) do
    if redis.call('ZSCORE', large, id) then
      if total >= offset and #ids < limit then ids[#ids + 1] = id end
      total = total + 1
    end
  end
  start = start + 1000
end
local rows = fetch(KEYS[3], ids)
table.insert(rows, 1, total)
return rows
`,
};
