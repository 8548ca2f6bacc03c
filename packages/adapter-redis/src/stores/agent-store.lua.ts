/** @module Lua for agents beyond the shared record scripts: the first, atomic step of a delete. */
import { namedScript } from '../script.js';
import { EVENT_ARGS, EVENT_KEYS, LUA_RECORD_EVENT } from './event-log.lua.js';

/**
 * Deletes the agent if its stored JSON is still `expected` (the record `agent.deleted` was built
 * from), with its index entries, records the event and marks its cascade pending (cascade.lua.ts).
 * Returns `{outcome, pending agent id…}`: outcome 'ok', 'gone' or 'changed' (only 'ok' writes),
 * then every pending cascade (this one included, and any an earlier interrupted delete left
 * behind) so the caller can finish them.
 */
export const AGENT_DELETE = namedScript({
  name: 'agent_delete',
  keys: ['agent', 'indexes[]', 'cascades', ...EVENT_KEYS],
  args: ['id', 'expected', ...EVENT_ARGS],
  lua: `${LUA_RECORD_EVENT}
local outcome = 'ok'
local stored = redis.call('HGET', agent, id)
if not stored then
  outcome = 'gone'
elseif stored ~= expected then
  outcome = 'changed'
else
  local seq = beginEvent()
  redis.call('HDEL', agent, id)
  for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
  redis.call('SADD', cascades, id)
  recordEvent(seq)
end
local out = redis.call('SMEMBERS', cascades)
table.insert(out, 1, outcome)
return out
`,
});
