/**
 * @module Lua for records kept as a HASH (id → stored record, see record-format.ts) plus ZSET
 * indexes (score 0, member id): agents, conversations and webhook endpoints.
 *
 * With every score 0 a ZSET orders members by their bytes, and ids are time-sortable, so rank
 * order is creation order: "newest first" is `ZRANGE … REV` by rank, O(log n + page), and a
 * total is ZCARD, O(1). A change is merged into the stored record inside the script
 * (`LUA_RECORD`), so there is no read before a write and nothing to retry.
 */
import { HIDDEN_FIELDS } from '@parley/core/adapter';
import { LUA_FETCH, namedScript } from '../script.js';
import { writeScript } from './event-log.lua.js';

/**
 * Helpers over one stored record (record-format.ts), which read the locals `hasIfVersion`,
 * `ifVersion`, `where`, `set`, `touch` and `bump` of the script that calls them:
 * `parseRecord(raw)` → `{version, body}` (`body`: the segments, each after its 0x1F);
 * `fieldJson(record, name)` (`'null'` when absent); `advance(record, name, json)` sets a timestamp
 * field unless the stored one is later; `meets(record)`, the preconditions; `applyChange(record)`,
 * the merge and the version; `encodeRecord(record)`, the stored form; `recordJson(record)`, the
 * record's JSON without its hidden fields (`HIDDEN_FIELDS` of `@parley/core`: an agent's tools
 * secret), an event's `data`.
 * A field is found where it is needed, by a plain search for `0x1F"name":` (0x1F only ever
 * separates segments, record-format.ts), and replaced in place: no table of every segment is built
 * — splitting a conversation into its segments and joining them again dominated a message
 * append's script time (docs/performance.md).
 * Comparisons are byte-wise (`lessBytes`): Lua's `<` on strings follows the server's locale.
 * `lessBytes` skips the common prefix 8 bytes at a time (string equality is byte-wise), then
 * compares the first differing byte: two timestamps that differ in their milliseconds cost three
 * 8-byte steps and a few single ones instead of ~22 single ones.
 */
export const LUA_RECORD = `
local SEP = '\\31'
local find, sub, byte = string.find, string.sub, string.byte
local function lessBytes(a, b)
  if a == b then return false end
  local i = 1
  while sub(a, i, i + 7) == sub(b, i, i + 7) do i = i + 8 end
  local x, y = byte(a, i), byte(b, i)
  while x == y do
    i = i + 1
    x, y = byte(a, i), byte(b, i)
  end
  if x == nil then return true end
  if y == nil then return false end
  return x < y
end
local function fieldName(segment)
  return sub(segment, 2, find(segment, '"', 2, true) - 1)
end
local function parseRecord(raw)
  local at = find(raw, SEP, 1, true)
  return { version = tonumber(sub(raw, 1, at - 1)), body = sub(raw, at) }
end
local function findField(body, name)
  local key = SEP .. '"' .. name .. '":'
  local first = find(body, key, 1, true)
  if not first then return nil end
  return first, first + #key, find(body, SEP, first + 1, true)
end
local function fieldJson(record, name)
  local _, value, stop = findField(record.body, name)
  if not value then return 'null' end
  return sub(record.body, value, (stop or 0) - 1)
end
local function splice(body, from, stop, text)
  return sub(body, 1, from - 1) .. text .. (stop and sub(body, stop) or '')
end
local function setSegment(record, segment)
  local body = record.body
  local first, _, stop = findField(body, fieldName(segment))
  if first then record.body = splice(body, first + 1, stop, segment) else record.body = body .. SEP .. segment end
end
local function advance(record, name, json)
  local body = record.body
  local first, value, stop = findField(body, name)
  if not first then
    record.body = body .. SEP .. '"' .. name .. '":' .. json
    return
  end
  local current = sub(body, value, (stop or 0) - 1)
  if current == 'null' or lessBytes(current, json) then record.body = splice(body, value, stop, json) end
end
local function encodeRecord(record)
  return record.version .. record.body
end
local HIDDEN = { ${HIDDEN_FIELDS.map((name) => JSON.stringify(name)).join(', ')} }
local function recordJson(record)
  local body = record.body
  for _, name in ipairs(HIDDEN) do
    local first, _, stop = findField(body, name)
    if first then body = splice(body, first, stop, '') end
  end
  return '{' .. string.gsub(sub(body, 2), SEP, ',') .. '}'
end
local function meets(record)
  if hasIfVersion == '1' then
    local listed = false
    for _, version in ipairs(ifVersion) do
      if tonumber(version) == record.version then listed = true end
    end
    if not listed then return false end
  end
  for _, condition in ipairs(where) do
    local a = string.find(condition, SEP, 1, true)
    local b = string.find(condition, SEP, a + 1, true)
    local op, json, value = string.sub(condition, 1, a - 1), fieldJson(record, string.sub(condition, a + 1, b - 1)), string.sub(condition, b + 1)
    if op == '=' then
      if json ~= value then return false end
    elseif string.sub(json, 1, 1) ~= '"' or not lessBytes(json, value) then
      return false
    end
  end
  return true
end
local function applyChange(record)
  for _, segment in ipairs(set) do setSegment(record, segment) end
  if touch ~= '' then advance(record, 'updatedAt', touch) end
  record.version = record.version + tonumber(bump)
end
`;

/** One page of `index`, newest first. Returns `{total, record…}`. */
export const PAGE = namedScript({
  name: 'page',
  keys: ['index', 'hash'],
  args: ['offset', 'limit'],
  lua: `${LUA_FETCH}
local total = redis.call('ZCARD', index)
local first, count = tonumber(offset), tonumber(limit)
if count <= 0 or first >= total then return {total} end
local rows = fetch(hash, redis.call('ZRANGE', index, first, first + count - 1, 'REV'))
table.insert(rows, 1, total)
return rows
`,
});

/** Stores a record (`stored`, record-format.ts), adds it to `indexes` and records the event (if any). Returns 1. */
export const RECORD_INSERT = writeScript({
  name: 'record_insert',
  keys: ['hash', 'indexes[]'],
  args: ['id', 'stored'],
  lua: `
local seq = beginEvent()
redis.call('HSET', hash, id, stored)
for _, index in ipairs(indexes) do redis.call('ZADD', index, 0, id) end
recordEvent(seq)
return 1
`,
});

/**
 * Applies a change (ports/storage.ts `Change`, as record-format.ts `changeArgs` encodes it) to the
 * stored record: when its preconditions hold, merges it, moves the record from the `leave`
 * indexes to the `join` ones and records the event (if any) with the record as stored after.
 * Returns `{'applied', stored after}`, `{'unmet', stored}` (nothing written) or nil (no record).
 */
export const RECORD_UPDATE = writeScript({
  name: 'record_update',
  keys: ['hash', 'leave[]', 'join[]'],
  args: ['id', 'set[]', 'touch', 'bump', 'hasIfVersion', 'ifVersion[]', 'where[]'],
  lua: `${LUA_RECORD}
local raw = redis.call('HGET', hash, id)
if not raw then return false end
local record = parseRecord(raw)
if not meets(record) then return {'unmet', raw} end
local seq = beginEvent()
applyChange(record)
local stored = encodeRecord(record)
redis.call('HSET', hash, id, stored)
for _, index in ipairs(leave) do redis.call('ZREM', index, id) end
for _, index in ipairs(join) do redis.call('ZADD', index, 0, id) end
recordEvent(seq, recordJson(record))
return {'applied', stored}
`,
});

/**
 * Deletes a record whose preconditions hold, with its `indexes` entries and the `purge` keys
 * (UNLINK: freed off the main thread). Returns `{'applied', stored}` (what was deleted),
 * `{'unmet', stored}` (nothing written) or nil (no record).
 */
export const RECORD_REMOVE = writeScript({
  name: 'record_remove',
  keys: ['hash', 'indexes[]', 'purge[]'],
  args: ['id', 'hasIfVersion', 'ifVersion[]', 'where[]'],
  lua: `${LUA_RECORD}
local raw = redis.call('HGET', hash, id)
if not raw then return false end
if not meets(parseRecord(raw)) then return {'unmet', raw} end
redis.call('HDEL', hash, id)
for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
if #purge > 0 then redis.call('UNLINK', unpack(purge)) end
return {'applied', raw}
`,
});
