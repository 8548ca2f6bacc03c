/** @module Lua for agents beyond the shared record scripts: the first, atomic step of a delete. */
import { LUA_RECORD } from './records.lua.js';
import { writeScript } from './event-log.lua.js';

/**
 * Deletes the agent if its preconditions hold (records.lua.ts `meets`), with its index entries,
 * records `agent.deleted` with the agent as stored, and marks its cascade pending (cascade.lua.ts).
 * Returns `{outcome, stored, pending agent id…}`: outcome 'applied' (`stored` is the deleted agent),
 * 'unmet' (nothing written, `stored` as stored) or 'gone' (`stored` is ''), then every pending
 * cascade (this one included, and any an earlier interrupted delete left behind) so the caller
 * can finish them.
 */
export const AGENT_DELETE = writeScript({
  name: 'agent_delete',
  keys: ['agent', 'indexes[]', 'cascades'],
  args: ['id', 'hasIfVersion', 'ifVersion[]', 'where[]'],
  lua: `${LUA_RECORD}
local outcome = 'applied'
local raw = redis.call('HGET', agent, id)
if not raw then
  outcome = 'gone'
  raw = ''
else
  local record = parseRecord(raw)
  if not meets(record) then
    outcome = 'unmet'
  else
    local seq = beginEvent()
    redis.call('HDEL', agent, id)
    for _, index in ipairs(indexes) do redis.call('ZREM', index, id) end
    redis.call('SADD', cascades, id)
    recordEvent(seq, recordJson(record))
  end
end
local out = redis.call('SMEMBERS', cascades)
table.insert(out, 1, raw)
table.insert(out, 1, outcome)
return out
`,
});
