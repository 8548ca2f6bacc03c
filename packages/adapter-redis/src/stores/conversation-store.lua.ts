/**
 * @module Lua for conversations: insert only under an active agent, compare-and-set updates with
 * index moves, and lists filtered by two indexes at once.
 *
 * Which agent and user indexes a conversation is in depends on its agent and user, its "owner",
 * kept beside the record in the owner hash as the string `conversationOwner()`
 * (conversation-store.ts) builds, so the cascade (cascade.lua.ts) finds a conversation's user
 * indexes without decoding the record: Lua's cjson rejects the lone UTF-16 surrogates
 * (`"\ud800"`) that JSON.stringify writes and a JSON body may carry.
 */
import { LUA_FETCH, namedScript } from '../script.js';
import { EVENT_ARGS, EVENT_KEYS, LUA_RECORD_EVENT } from './event-log.lua.js';

/**
 * Stores a conversation and records `conversation.started` if its agent is active (a member of
 * `activeAgents`) — in the same atomic step, so a concurrent agent delete or deactivation either
 * comes after (and sees the conversation) or makes this insert fail.
 * Returns 'inserted', or (nothing written) 'agent_inactive' / 'agent_not_found'.
 */
export const CONVERSATION_INSERT = namedScript({
  name: 'conversation_insert',
  keys: ['agent', 'activeAgents', 'conv', 'convOwner', 'indexes[]', ...EVENT_KEYS],
  args: ['agentId', 'id', 'json', 'owner', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
if not redis.call('ZSCORE', activeAgents, agentId) then
  if redis.call('HEXISTS', agent, agentId) == 1 then return 'agent_inactive' end
  return 'agent_not_found'
end
local seq = beginEvent()
redis.call('HSET', conv, id, json)
redis.call('HSET', convOwner, id, owner)
for _, index in ipairs(indexes) do redis.call('ZADD', index, 0, id) end
recordEvent(seq)
return 'inserted'
`,
});

/**
 * Compare-and-set: replaces the conversation only if its stored JSON is still `expected`, moving
 * it from the `leave` indexes (every index of the stored owner but the all-conversations one) to
 * the `join` ones, storing its `owner`, and recording the event (if any).
 * Returns 'ok', 'gone' or 'changed'; only 'ok' writes.
 */
export const CONVERSATION_UPDATE = namedScript({
  name: 'conversation_update',
  keys: ['conv', 'convOwner', 'leave[]', 'join[]', ...EVENT_KEYS],
  args: ['id', 'expected', 'json', 'owner', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
local stored = redis.call('HGET', conv, id)
if not stored then return 'gone' end
if stored ~= expected then return 'changed' end
local seq = beginEvent()
redis.call('HSET', conv, id, json)
redis.call('HSET', convOwner, id, owner)
for _, index in ipairs(leave) do redis.call('ZREM', index, id) end
for _, index in ipairs(join) do redis.call('ZADD', index, 0, id) end
recordEvent(seq)
return 'ok'
`,
});

/**
 * One page of the intersection of two indexes, newest first: walks the smaller index in rank
 * order and keeps members also in the other (ZSCORE, O(1)). Cost O(min(|A|, |B|)) — the total
 * needs every match counted. Returns `{total, record…}`.
 */
export const INTERSECTION_PAGE = namedScript({
  name: 'intersection_page',
  keys: ['indexA', 'indexB', 'hash'],
  args: ['offset', 'limit'],
  lua: `${LUA_FETCH}
local small, large = indexA, indexB
if redis.call('ZCARD', small) > redis.call('ZCARD', large) then small, large = large, small end
local first, count = tonumber(offset), tonumber(limit)
local total, ids, start = 0, {}, 0
while true do
  local chunk = redis.call('ZRANGE', small, start, start + 999, 'REV')
  if #chunk == 0 then break end
  for _, id in ipairs(chunk) do
    if redis.call('ZSCORE', large, id) then
      if total >= first and #ids < count then ids[#ids + 1] = id end
      total = total + 1
    end
  end
  start = start + 1000
end
local rows = fetch(hash, ids)
table.insert(rows, 1, total)
return rows
`,
});
