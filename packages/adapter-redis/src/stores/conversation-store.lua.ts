/**
 * @module Lua for conversations: insert only under an active agent, compare-and-set updates with
 * index moves, and lists filtered by two indexes at once.
 *
 * Which agent and user indexes a conversation is in depends on its agent and user, its "owner",
 * kept beside the record in the owner hash as the string `conversationOwner()`
 * (conversation-store.ts) builds, so the cascade (cascade.lua.ts) finds a conversation's user
 * indexes without decoding the record: Lua's cjson rejects the lone UTF-16 surrogates
 * (`"\ud800"`) that JSON.stringify writes and a JSON body may carry. For the same reason a
 * message append keeps the conversation's `lastMessageAt` in the activity hash beside the record
 * (conversation-activity.ts merges the two at read): reads here return `{json, activity or ''}`
 * pairs, taken in the same step so a record and its activity always belong together.
 */

/** `fetchPairs(ids)`: per id that has a record, its JSON and its activity (or ''), in order. */
const LUA_FETCH_PAIRS = `
local function fetchPairs(hash, activity, ids)
  local out = {}
  for first = 1, #ids, 1000 do
    local last = math.min(first + 999, #ids)
    local rows = redis.call('HMGET', hash, unpack(ids, first, last))
    local ats = redis.call('HMGET', activity, unpack(ids, first, last))
    for i = 1, #rows do
      if rows[i] then
        out[#out + 1] = rows[i]
        out[#out + 1] = ats[i] or ''
      end
    end
  end
  return out
end
`;

/** One conversation: `{json, activity or ''}`, or an empty array when there is none. */
export const CONVERSATION_GET = namedScript({
  name: 'conversation_get',
  keys: ['conv', 'convActivity'],
  args: ['id'],
  lua: `${LUA_FETCH_PAIRS}
return fetchPairs(conv, convActivity, {id})
`,
});

/** One page of `index`, newest first. Returns `{total, json, activity, …}`. */
export const CONVERSATION_PAGE = namedScript({
  name: 'conversation_page',
  keys: ['index', 'conv', 'convActivity'],
  args: ['offset', 'limit'],
  lua: `${LUA_FETCH_PAIRS}
local total = redis.call('ZCARD', index)
local first, count = tonumber(offset), tonumber(limit)
if count <= 0 or first >= total then return {total} end
local rows = fetchPairs(conv, convActivity, redis.call('ZRANGE', index, first, first + count - 1, 'REV'))
table.insert(rows, 1, total)
return rows
`,
});
import { namedScript } from '../script.js';
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
 * Compare-and-set: replaces the conversation only if its stored JSON is still `expected` and its
 * activity still `expectedActivity` ('' for none: a message since makes the caller decide again,
 * so a `conversation.completed` event never carries a stale `lastMessageAt`), moving
 * it from the `leave` indexes (every index of the stored owner but the all-conversations one) to
 * the `join` ones, storing its `owner`, and recording the event (if any).
 * Returns 'ok', 'gone' or 'changed'; only 'ok' writes.
 */
export const CONVERSATION_UPDATE = namedScript({
  name: 'conversation_update',
  keys: ['conv', 'convOwner', 'convActivity', 'leave[]', 'join[]', ...EVENT_KEYS],
  args: ['id', 'expected', 'expectedActivity', 'json', 'owner', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
local stored = redis.call('HGET', conv, id)
if not stored then return 'gone' end
if stored ~= expected then return 'changed' end
if (redis.call('HGET', convActivity, id) or '') ~= expectedActivity then return 'changed' end
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
 * Deletes a conversation — its record, owner, activity, every index entry (`indexes`: those of
 * the owner read before, plus the all-conversations one) and its messages (`msg`, `msgs`, by
 * UNLINK, freed off the main thread) — if its stored owner is still `owner` (else the index keys
 * would be wrong: 'changed', nothing written) and, when `checked` is '1', its record and activity
 * are still `expectedJson` and `expectedActivity` (what the caller's check saw), recording the
 * event (`conversation.deleted`, if any) in the same step.
 * Returns 'ok', 'gone' or 'changed'.
 */
export const CONVERSATION_DELETE = namedScript({
  name: 'conversation_delete',
  keys: ['conv', 'convOwner', 'convActivity', 'indexes[]', 'msg', 'msgs', ...EVENT_KEYS],
  args: ['id', 'owner', 'expectedJson', 'expectedActivity', 'checked', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
if redis.call('HEXISTS', conv, id) == 0 then return 'gone' end
if redis.call('HGET', convOwner, id) ~= owner then return 'changed' end
if checked == '1' and (redis.call('HGET', conv, id) ~= expectedJson or (redis.call('HGET', convActivity, id) or '') ~= expectedActivity) then return 'changed' end
local seq = beginEvent()
redis.call('HDEL', conv, id)
redis.call('HDEL', convOwner, id)
redis.call('HDEL', convActivity, id)
for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
redis.call('UNLINK', msg, msgs)
recordEvent(seq)
return 'ok'
`,
});

/**
 * One page of the intersection of two indexes, newest first: walks the smaller index in rank
 * order and keeps members also in the other (ZSCORE, O(1)). Cost O(min(|A|, |B|)) — the total
 * needs every match counted. Returns `{total, json, activity, …}`.
 */
export const INTERSECTION_PAGE = namedScript({
  name: 'intersection_page',
  keys: ['indexA', 'indexB', 'conv', 'convActivity'],
  args: ['offset', 'limit'],
  lua: `${LUA_FETCH_PAIRS}
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
local rows = fetchPairs(conv, convActivity, ids)
table.insert(rows, 1, total)
return rows
`,
});
