/**
 * @module Lua for a conversation's history: a HASH (message id → JSON) and a ZSET of message ids,
 * all with score 0.
 *
 * Equal scores order members by their bytes, and message ids are `msg_<ULID>` (time-sortable,
 * fixed width), so the ZSET is the history in id order whatever order appends arrive in. A page
 * is `ZRANGE … BYLEX REV LIMIT 0 limit+1` from just below the cursor — O(log n + limit) — and the
 * cursor check is ZSCORE, O(1): a page costs the same at ten messages and at ten million.
 */
import { LUA_FETCH, type LuaScript } from './script.js';

/**
 * Appends a message if its conversation exists, in the same atomic step.
 * KEYS: conversation hash, message hash, message index. ARGV: conversationId, id, json.
 * Returns 1, or 0 (nothing written) when the conversation does not exist.
 */
export const MESSAGE_APPEND: LuaScript = {
  name: 'message_append',
  lua: `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
return 1
`,
};

/**
 * The `limit` newest messages below the cursor, newest first.
 * KEYS: message index, message hash. ARGV: `1` and the cursor's message id, or `0` and '' for
 * the newest page; limit.
 * Returns `{hasMore (0|1), json…}`, or nil when the cursor is not a message of this history.
 */
export const MESSAGE_PAGE: LuaScript = {
  name: 'message_page',
  lua: `${LUA_FETCH}
local max = '+'
if ARGV[1] == '1' then
  if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return false end
  max = '(' .. ARGV[2]
end
local limit = tonumber(ARGV[3])
local ids = redis.call('ZRANGE', KEYS[1], max, '-', 'BYLEX', 'REV', 'LIMIT', 0, limit + 1)
local more = 0
if #ids > limit then
  more = 1
  ids[#ids] = nil
end
local rows = fetch(KEYS[2], ids)
table.insert(rows, 1, more)
return rows
`,
};
