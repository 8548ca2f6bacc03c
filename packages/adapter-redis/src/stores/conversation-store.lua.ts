/**
 * @module Lua for conversations beyond the shared record scripts (records.lua.ts): insert only
 * under an active agent, delete with its messages, and lists filtered by two indexes at once.
 *
 * Which agent and user indexes a conversation is in depends on its agent and user, its "owner",
 * kept beside the record in the owner hash as the string `conversationOwner()`
 * (conversation-store.ts) builds, so the cascade (cascade.lua.ts) and a delete find a
 * conversation's user indexes without reading the record. An owner never changes.
 */
import { LUA_FETCH, namedScript } from '../script.js';
import { writeScript } from './event-log.lua.js';
import { LUA_RECORD } from './records.lua.js';

/**
 * Stores a conversation and records `conversation.started` if its agent is active (a member of
 * `activeAgents`) — in the same atomic step, so a concurrent agent delete or deactivation either
 * comes after (and sees the conversation) or makes this insert fail.
 * Returns 'inserted', or (nothing written) 'agent_inactive' / 'agent_not_found'.
 */
export const CONVERSATION_INSERT = writeScript({
  name: 'conversation_insert',
  keys: ['agent', 'activeAgents', 'conv', 'convOwner', 'indexes[]'],
  args: ['agentId', 'id', 'stored', 'owner'],
  lua: `
if not redis.call('ZSCORE', activeAgents, agentId) then
  if redis.call('HEXISTS', agent, agentId) == 1 then return 'agent_inactive' end
  return 'agent_not_found'
end
local seq = beginEvent()
redis.call('HSET', conv, id, stored)
redis.call('HSET', convOwner, id, owner)
for _, index in ipairs(indexes) do redis.call('ZADD', index, 0, id) end
recordEvent(seq)
return 'inserted'
`,
});

/**
 * Deletes a conversation — its record, owner, every index entry (`indexes`: those of its owner,
 * plus the all-conversations one) and its messages (`msg`, `msgs`, by UNLINK, freed off the main
 * thread) — if its preconditions hold (records.lua.ts `meets`), recording the event (if any:
 * `conversation.deleted`) with the conversation as stored. `owner` is the
 * stored owner the caller read to name the index keys; owners never change, so another one means
 * the conversation is not the one read. Returns `{'applied', stored}` (what was deleted),
 * `{'unmet', stored}` (nothing written) or nil (none).
 */
export const CONVERSATION_DELETE = writeScript({
  name: 'conversation_delete',
  keys: ['conv', 'convOwner', 'indexes[]', 'msg', 'msgs'],
  args: ['id', 'owner', 'hasIfVersion', 'ifVersion[]', 'where[]'],
  lua: `${LUA_RECORD}
local raw = redis.call('HGET', conv, id)
if not raw or redis.call('HGET', convOwner, id) ~= owner then return false end
local record = parseRecord(raw)
if not meets(record) then return {'unmet', raw} end
local seq = beginEvent()
redis.call('HDEL', conv, id)
redis.call('HDEL', convOwner, id)
for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
redis.call('UNLINK', msg, msgs)
recordEvent(seq, recordJson(record))
return {'applied', raw}
`,
});

/**
 * One page of the intersection of two indexes, newest first: walks the smaller index in rank
 * order and keeps members also in the other (ZSCORE, O(1)). Cost O(min(|A|, |B|)) — the total
 * needs every match counted. Returns `{total, stored…}`.
 */
export const INTERSECTION_PAGE = namedScript({
  name: 'intersection_page',
  keys: ['indexA', 'indexB', 'conv'],
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
local rows = fetch(conv, ids)
table.insert(rows, 1, total)
return rows
`,
});
