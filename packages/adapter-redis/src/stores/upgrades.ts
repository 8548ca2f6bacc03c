/**
 * @module Records an earlier Parley stored on Redis in an earlier shape, rewritten in this
 * version's shape once per key prefix, before the server serves (`redisAdapters().ready()`,
 * docs/storage.md#upgrades).
 *
 * Redis has no schema to migrate, and converting on every read would not be enough: a write merges
 * fields into the stored record inside a script (records.lua.ts) and an event's `data` is built
 * there from the stored segments, so a record left in the old shape would keep it in events and lose
 * settings on a PATCH of `configuration`. So each upgrade walks the records it concerns — every
 * workspace is in the outbox's registry (keys.ts `outboxKeys`: a workspace is registered before its
 * first write) — and replaces each old one in one compare-and-set script: a record changed meanwhile
 * is read again and converted again, so a write made while the upgrade runs is never undone. Once
 * every record is done the upgrade's name joins the SET of applied upgrades (keys.ts `upgradesKey`)
 * and later starts skip it. Several processes starting at once may run it together: each record is
 * replaced once. An interrupted upgrade runs again at the next start.
 */
import { MAX_STEPS, recordVersion } from '@parley/core/adapter';
import type { RedisRunner } from '../connection.js';
import { outboxKeys, upgradesKey, workspaceKeys, type WorkspaceKeys } from '../keys.js';
import { namedScript } from '../script.js';
import { decodeRecord, encodeRecord } from './record-format.js';

/** Replaces the stored value of `id` in `hash` with `replacement` if it is still `expected`; 1 if replaced. */
const REPLACE_IF_UNCHANGED = namedScript({
  name: 'record_replace_if_unchanged',
  keys: ['hash'],
  args: ['id', 'expected', 'replacement'],
  lua: `
if redis.call('HGET', hash, id) ~= expected then return 0 end
redis.call('HSET', hash, id, replacement)
return 1
`,
});

/** One upgrade: the HASH of records it concerns in a workspace, and how one stored record changes. */
interface Upgrade {
  /** Recorded in the SET of applied upgrades; never renamed. */
  name: string;
  hash(keys: WorkspaceKeys): string;
  /** The stored form of `stored` in the new shape, or `null` when it is in that shape already. */
  convert(stored: string): string | null;
}

/**
 * Agents stored before their own settings became top-level fields (docs/api.md#agent-settings):
 * `tools`, `maxSteps` and `autoReply` move out of `configuration`, which keeps every other key, as
 * PostgreSQL's migration 0006 does. A key moves only when its value is one Parley acted on (`tools`
 * a list of objects, `maxSteps` a number, `autoReply` a boolean); any other value was never a
 * setting and stays the caller's, and the setting takes its default. The version goes up by one.
 */
function agentSettings(stored: string): string | null {
  const record = decodeRecord<Record<string, unknown>>(stored);
  if ('tools' in record) return null;
  const { tools, maxSteps, autoReply, ...rest } = (record.configuration ?? {}) as Record<string, unknown>;
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  const isToolList = Array.isArray(tools) && tools.every(isObject);
  const configuration = {
    ...rest,
    ...(!isToolList && tools !== undefined && { tools }),
    ...(typeof maxSteps !== 'number' && maxSteps !== undefined && { maxSteps }),
    ...(typeof autoReply !== 'boolean' && autoReply !== undefined && { autoReply }),
  };
  const settings = {
    tools: isToolList ? tools : [],
    maxSteps: typeof maxSteps === 'number' ? maxSteps : MAX_STEPS.default,
    autoReply: typeof autoReply === 'boolean' ? autoReply : true,
  };
  // The settings go right after `configuration`, where a new agent has them.
  const upgraded: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) {
    if (field !== 'configuration') upgraded[field] = value;
    else Object.assign(upgraded, { configuration }, settings);
  }
  if (!('configuration' in record)) Object.assign(upgraded, { configuration }, settings);
  return encodeRecord(upgraded, recordVersion(record) + 1);
}

/**
 * Agents stored before they had MCP servers (docs/mcp.md) get the default, none (`mcpServers: []`,
 * after `autoReply`), as PostgreSQL's migration 0010 does. The version goes up by one.
 */
function agentMcpServers(stored: string): string | null {
  const record = decodeRecord<Record<string, unknown>>(stored);
  if ('mcpServers' in record) return null;
  const upgraded: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) {
    upgraded[field] = value;
    if (field === 'autoReply') upgraded.mcpServers = [];
  }
  if (!('mcpServers' in upgraded)) upgraded.mcpServers = [];
  return encodeRecord(upgraded, recordVersion(record) + 1);
}

/** Every upgrade, in the order they came; a new one is appended. */
const UPGRADES: readonly Upgrade[] = [
  { name: 'agent-settings', hash: (keys) => keys.agent, convert: agentSettings },
  { name: 'agent-mcp-servers', hash: (keys) => keys.agent, convert: agentMcpServers },
];

/** Records read per HSCAN / workspaces per SSCAN call. */
const SCAN_COUNT = 200;

/**
 * Applies every upgrade not yet recorded under the runner's prefix (see the module's doc).
 * Resolves when the records are all in this version's shape.
 * @throws ParleyError `service_unavailable` when Redis stops answering meanwhile (the next start resumes).
 */
export async function upgradeRecords(runner: RedisRunner): Promise<void> {
  const applied = upgradesKey(runner.prefix);
  for (const upgrade of UPGRADES) {
    if ((await runner.run((client) => client.sismember(applied, upgrade.name))) === 1) continue;
    const { workspaces } = outboxKeys(runner.prefix);
    let cursor = '0';
    do {
      const [next, members] = await runner.run((client) => client.sscan(workspaces, cursor, 'COUNT', SCAN_COUNT));
      cursor = next;
      for (const workspaceId of members) {
        await upgradeHash(runner, upgrade, upgrade.hash(workspaceKeys(runner.prefix, workspaceId)));
      }
    } while (cursor !== '0');
    await runner.run((client) => client.sadd(applied, upgrade.name));
  }
}

/** Converts every record of `hash` that `upgrade` changes. */
async function upgradeHash(runner: RedisRunner, upgrade: Upgrade, hash: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, pairs] = await runner.run((client) => client.hscan(hash, cursor, 'COUNT', SCAN_COUNT));
    cursor = next;
    for (let i = 0; i < pairs.length; i += 2) await upgradeRecord(runner, upgrade, hash, pairs[i]!, pairs[i + 1]!);
  } while (cursor !== '0');
}

/** Replaces one record; when a write changed it meanwhile, reads it again (gone: nothing to do). */
async function upgradeRecord(
  runner: RedisRunner,
  upgrade: Upgrade,
  hash: string,
  id: string,
  stored: string | null,
): Promise<void> {
  while (stored !== null) {
    const replacement = upgrade.convert(stored);
    if (replacement === null) return;
    const call = { keys: { hash }, args: { id, expected: stored, replacement } };
    if ((await runner.script(REPLACE_IF_UNCHANGED, call)) === 1) return;
    stored = await runner.hget(hash, id);
  }
}
