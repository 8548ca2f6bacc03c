/**
 * @module Lua for a conversation's history: a HASH (message id → JSON) and a ZSET of message ids,
 * all with score 0.
 *
 * Equal scores order members by their bytes, and message ids are `msg_<ULID>` (time-sortable,
 * fixed width), so the ZSET is the history in id order whatever order appends arrive in. A page
 * is `ZRANGE … BYLEX REV LIMIT 0 limit+1` from just below the cursor — O(log n + limit) — and the
 * cursor check is ZSCORE, O(1): a page costs the same at ten messages and at ten million.
 */
import { LUA_FETCH, LUA_PAGE_REPLY, namedScript } from '../script.js';
import { writeScript } from './event-log.lua.js';
import { LUA_RECORD } from './records.lua.js';

/**
 * Appends a message (`stored`, its JSON) and records its event if its conversation is active (its
 * stored `status`, read with the record the script updates anyway), in the same atomic step — so
 * no message lands after `completed`. In the same step the conversation's `lastMessageAt` and
 * `updatedAt` become the later of themselves and `at` (a quoted ISO 8601 timestamp), and its
 * version goes up by one (records.lua.ts). The event's `data` is `stored`, unless the caller gives
 * its own (`eventData`): a message's JSON crosses the network once.
 * Returns 'appended', or (nothing written) 'conversation_completed' / 'conversation_not_found'.
 */
export const MESSAGE_APPEND = writeScript({
  name: 'message_append',
  keys: ['conv', 'msg', 'msgs', 'usage'],
  args: ['conversationId', 'id', 'stored', 'at', 'usageTtl', 'increments[]'],
  lua: `${LUA_RECORD}
local raw = redis.call('HGET', conv, conversationId)
if not raw then return 'conversation_not_found' end
local conversation = parseRecord(raw)
if fieldJson(conversation, 'status') ~= '"active"' then return 'conversation_completed' end
local seq = beginEvent()
redis.call('HSET', msg, id, stored)
redis.call('ZADD', msgs, 0, id)
advance(conversation, 'lastMessageAt', at)
advance(conversation, 'updatedAt', at)
conversation.version = conversation.version + 1
redis.call('HSET', conv, conversationId, encodeRecord(conversation))
if #increments > 0 then
  for i = 1, #increments, 2 do redis.call('HINCRBY', usage, increments[i], increments[i + 1]) end
  redis.call('EXPIRE', usage, usageTtl)
end
recordEvent(seq, stored)
return 'appended'
`,
});

/**
 * The `limit` newest messages below the cursor `before` (when `hasBefore` is '1'; else the newest
 * page), newest first — or, when `hasAfter` is '1', the `limit` oldest messages above the cursor
 * `after`, oldest first.
 * Returns `{hasMore (0|1), json…}`, or nil when the cursor is not a message of this history — or,
 * when `requireConversation` is '1', when `conversationId` is not a conversation in `conv`.
 */
export const MESSAGE_PAGE = namedScript({
  name: 'message_page',
  keys: ['msgs', 'msg', 'conv'],
  args: ['hasBefore', 'before', 'hasAfter', 'after', 'limit', 'requireConversation', 'conversationId'],
  lua: `${LUA_FETCH}${LUA_PAGE_REPLY}
if requireConversation == '1' and redis.call('HEXISTS', conv, conversationId) == 0 then return false end
local count = tonumber(limit)
local ids
if hasAfter == '1' then
  if not redis.call('ZSCORE', msgs, after) then return false end
  ids = redis.call('ZRANGE', msgs, '(' .. after, '+', 'BYLEX', 'LIMIT', 0, count + 1)
else
  local max = '+'
  if hasBefore == '1' then
    if not redis.call('ZSCORE', msgs, before) then return false end
    max = '(' .. before
  end
  ids = redis.call('ZRANGE', msgs, max, '-', 'BYLEX', 'REV', 'LIMIT', 0, count + 1)
end
local more = trimToLimit(ids, count)
local rows = fetch(msg, ids)
table.insert(rows, 1, more)
return rows
`,
});
