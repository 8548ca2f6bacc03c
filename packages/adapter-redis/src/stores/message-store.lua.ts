/**
 * @module Lua for a conversation's history: a HASH (message id → JSON) and a ZSET of message ids,
 * all with score 0.
 *
 * Equal scores order members by their bytes, and message ids are `msg_<ULID>` (time-sortable,
 * fixed width), so the ZSET is the history in id order whatever order appends arrive in. A page
 * is `ZRANGE … BYLEX REV LIMIT 0 limit+1` from just below the cursor — O(log n + limit) — and the
 * cursor check is ZSCORE, O(1): a page costs the same at ten messages and at ten million.
 */
import { LUA_GCRA } from '../gcra.lua.js';
import { LUA_FETCH, LUA_PAGE_REPLY, namedScript } from '../script.js';
import { LUA_RECORD_EVENTS } from './event-log.lua.js';
import { LUA_RECORD } from './records.lua.js';

/**
 * Appends messages of one workspace — the appends one process made in one turn of its event loop
 * (message-store.ts) — in one atomic step, each as if appended by a script of its own, in order:
 *
 * - An append with a rate-limit hit (`gateNow[i]` not '') has it decided first, on the
 *   workspace's state `rateLimit` (gcra.lua.ts): read at the first hit, stored once after the last;
 *   a refused append does nothing. When the state cannot be read or written (`OOM`, `NOPERM`), the
 *   append's failure policy (`gateOpen[i]`) decides, as script.ts describes for one script.
 * - The message (`stored[i]`, its JSON) is appended, with its event, if its conversation is active
 *   (its stored `status`, read once per conversation and updated anyway) — so no message lands
 *   after `completed`. The conversation's `lastMessageAt` and `updatedAt` become the later of
 *   themselves and its appends' latest `at[i]` (quoted ISO 8601 timestamps), and its version goes
 *   up by one per append (records.lua.ts). A reply's usage (`increments[i]`: '' or the JSON of
 *   `[field, increment, …]`) is counted on its day's HASH `usage[i]`, kept `usageTtl` seconds.
 * - The event's JSON is `eventHead[i]` and its `data`: `eventData[i]`, or the message's JSON when
 *   that is '' (a message's JSON crosses the network once); its outbox entry carries `eventTrace[i]`
 *   (the append's W3C trace context, '' for none).
 *
 * So n appends to one conversation cost one HGET and one HSET of it, one HSET and one ZADD of its
 * history, and the events' commands of `recordEvents` (event-log.lua.ts) — the same commands as
 * one append. Returns `{recorded, trimDue, reply…}` (`writeScript`'s first and last values, then
 * one reply per append): 'appended', 'conversation_completed' or 'conversation_not_found' (nothing
 * written), or for an append with a hit, the gated reply of script.ts around that.
 */
export const MESSAGE_APPEND = namedScript({
  name: 'message_append',
  keys: ['conv', 'event', 'events', 'eventSeq', 'outbox', 'rateLimit', 'msg[]', 'msgs[]', 'usage[]', 'eventsOfType[]'],
  args: [
    'usageTtl',
    'conversationId[]',
    'id[]',
    'stored[]',
    'at[]',
    'increments[]',
    'eventId[]',
    'eventHead[]',
    'eventData[]',
    'eventTrace[]',
    'gateNow[]',
    'gateInterval[]',
    'gateLimit[]',
    'gateOpen[]',
  ],
  lua: `${LUA_RECORD}${LUA_GCRA}${LUA_RECORD_EVENTS}
local replies, conversations, appended = {}, {}, {}
local stateRead, stateBroken, tat, seen, changedTat = false, false, nil, nil, false
for i = 1, #id do
  local admitted = true
  if gateNow[i] ~= '' then
    if not stateRead then
      stateRead = true
      local stored = redis.pcall('GET', rateLimit)
      if type(stored) == 'table' then stateBroken = true else tat, seen = gcraState(stored) end
    end
    if stateBroken then
      admitted = gateOpen[i] == '1'
      replies[i] = admitted and {-1, 0, 0, 0} or {-1}
    else
      local decision, newTat, newSeen = gcraStep(tat, seen, tonumber(gateNow[i]), tonumber(gateInterval[i]), tonumber(gateLimit[i]))
      replies[i] = decision
      if newTat then tat, seen, changedTat = newTat, newSeen, true else admitted = false end
    end
  end
  if admitted then
    local conversation = conversations[conversationId[i]]
    if conversation == nil then
      local raw = redis.call('HGET', conv, conversationId[i])
      conversation = raw and parseRecord(raw) or false
      if conversation then conversation.active = fieldJson(conversation, 'status') == '"active"' end
      conversations[conversationId[i]] = conversation
    end
    local body = 'appended'
    if not conversation then
      body = 'conversation_not_found'
    elseif not conversation.active then
      body = 'conversation_completed'
    else
      appended[#appended + 1] = i
    end
    if replies[i] then replies[i][5] = body else replies[i] = body end
  end
end
if changedTat and gcraSet(rateLimit, tat, seen, redis.pcall).err then
  -- The admitted hits could not be stored: each append's failure policy decides.
  for i = 1, #id do
    local reply = replies[i]
    if type(reply) == 'table' and reply[1] == 1 then
      replies[i] = gateOpen[i] == '1' and {-1, 0, 0, 0, reply[5]} or {-1}
    end
  end
  local kept = {}
  for _, i in ipairs(appended) do
    if gateNow[i] == '' or gateOpen[i] == '1' then kept[#kept + 1] = i end
  end
  appended = kept
end
if #appended == 0 then return {0, 0, unpack(replies)} end
local first = beginEvents(#appended)
local histories, changed, eventIds, eventJsons, typeKeys, traces = {}, {}, {}, {}, {}, {}
for n, i in ipairs(appended) do
  local history = histories[conversationId[i]]
  if not history then
    history = { hash = msg[i], index = msgs[i], fields = {}, members = {}, count = 0, at = at[i] }
    histories[conversationId[i]] = history
    changed[#changed + 1] = conversationId[i]
  end
  history.fields[#history.fields + 1] = id[i]
  history.fields[#history.fields + 1] = stored[i]
  history.members[#history.members + 1] = 0
  history.members[#history.members + 1] = id[i]
  history.count = history.count + 1
  if lessBytes(history.at, at[i]) then history.at = at[i] end
  if increments[i] ~= '' then
    local counts = cjson.decode(increments[i])
    for k = 1, #counts, 2 do redis.call('HINCRBY', usage[i], counts[k], counts[k + 1]) end
    redis.call('EXPIRE', usage[i], usageTtl)
  end
  local data = eventData[i]
  if data == '' then data = stored[i] end
  eventIds[n], eventJsons[n], typeKeys[n] = eventId[i], eventHead[i] .. ',"data":' .. data .. '}', eventsOfType[i]
  traces[n] = eventTrace[i]
end
local records = {}
for _, each in ipairs(changed) do
  local history, conversation = histories[each], conversations[each]
  redis.call('HSET', history.hash, unpack(history.fields))
  redis.call('ZADD', history.index, unpack(history.members))
  advance(conversation, 'lastMessageAt', history.at)
  advance(conversation, 'updatedAt', history.at)
  conversation.version = conversation.version + history.count
  records[#records + 1] = each
  records[#records + 1] = encodeRecord(conversation)
end
redis.call('HSET', conv, unpack(records))
local recorded, trimDue = recordEvents(first, eventIds, eventJsons, typeKeys, traces)
return {recorded, trimDue, unpack(replies)}
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
