/**
 * @module Upgrading agents stored with their settings inside `configuration` (stores/upgrades.ts),
 * on standalone Redis and on a Redis Cluster: records written the old way by raw Redis commands,
 * then opened by `redisAdapters().ready()` as a server start does.
 */
import type { Agent } from '@parley/core';
import { recordVersion } from '@parley/core/adapter';
import { Records } from '@parley/core/testing';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisAdapters } from './redis-adapters.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis } from '../test/redis-available.js';
import { probeRedisBinaries, startCluster, uniquePrefix } from '../test/redis-available.js';
import type { RedisClusterProcesses } from '../test/redis-available.js';

const WS = 'ws_upgrade';
const tool = { name: 'lookup', description: 'Looks an order up.', parameters: { type: 'object' }, kind: 'client' };

/** An agent as Parley stored it before its settings were top-level: any settings inside `configuration`. */
function oldAgent(id: string, configuration: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const at = '2026-03-01T09:00:00.000Z';
  const unset = { systemPrompt: null, temperature: null, maxTokens: null };
  const rest = { status: 'active', createdAt: at, updatedAt: at, ...extra };
  return { id, name: 'Ada', description: '', model: 'modelA-4', ...unset, configuration, ...rest };
}

const OLD_AGENTS = [
  // Every setting, beside keys of the caller's own; with a tools secret (a hidden field).
  oldAgent(
    'agt_settings',
    { tools: [tool], maxSteps: 3, autoReply: false, depth: 2, nested: { tools: ['kept'] } },
    { toolsSecret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMw==' },
  ),
  // No settings: the defaults.
  oldAgent('agt_plain', {}),
  // Values Parley never acted on as settings stay the caller's keys; the settings take their defaults.
  oldAgent('agt_callers', { tools: ['search'], maxSteps: 'many', autoReply: 'sometimes' }),
];

/**
 * Writes {@link OLD_AGENTS} as the Redis adapter stored them (stores/record-format.ts: the version,
 * then one `"field":json` segment per field, separated by 0x1F), indexed, in a registered workspace.
 */
async function writeOldAgents(client: Redis | Cluster, prefix: string): Promise<void> {
  const tag = `${prefix}{${WS}}:`;
  for (const agent of OLD_AGENTS) {
    const segments = Object.entries(agent).map(([field, value]) => `${JSON.stringify(field)}:${JSON.stringify(value)}`);
    const stored = ['1', ...segments].join('\x1f');
    await client.hset(`${tag}agent`, agent.id, stored);
    await client.zadd(`${tag}agents`, 0, agent.id);
    await client.zadd(`${tag}agents:status:active`, 0, agent.id);
  }
  await client.sadd(`${prefix}{parley:outbox}:workspaces`, WS);
}

/** What the upgraded records must be: settings top-level, the caller's keys left in `configuration`, one version on per upgrade, with no MCP servers. */
async function expectUpgraded(get: (id: string) => Promise<Agent | null>): Promise<void> {
  const [settings, plain, callers] = await Promise.all(OLD_AGENTS.map((agent) => get(agent.id)));
  const configuration = { depth: 2, nested: { tools: ['kept'] } };
  const none = { mcpServers: [] };
  expect(settings).toEqual({ ...OLD_AGENTS[0], configuration, tools: [tool], maxSteps: 3, autoReply: false, ...none });
  expect(plain).toEqual({ ...OLD_AGENTS[1], tools: [], maxSteps: 8, autoReply: true, ...none });
  expect(callers).toEqual({ ...OLD_AGENTS[2], tools: [], maxSteps: 8, autoReply: true, ...none });
  // One version on per upgrade: the settings (0006 / agent-settings), then `mcpServers` (0010 / agent-mcp-servers).
  for (const agent of [settings, plain, callers]) expect(recordVersion(agent!)).toBe(3);
}

function upgradeTests(client: () => Redis | Cluster, prefixFor: () => string): void {
  it("a start after the upgrade finds every setting top-level, the caller's keys kept, once", async () => {
    const prefix = prefixFor();
    await writeOldAgents(client(), prefix);
    const adapters = redisAdapters({ client: client(), prefix });
    await adapters.ready();
    await expectUpgraded((id) => adapters.storage.agents.get({ workspaceId: WS }, id));
    const { items } = await adapters.storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 });
    expect(items.map((agent) => [agent.id, agent.tools.length, recordVersion(agent)])).toEqual([
      ['agt_settings', 1, 3],
      ['agt_plain', 0, 3],
      ['agt_callers', 0, 3],
    ]);
    // A later start does nothing more.
    await redisAdapters({ client: client(), prefix }).ready();
    await expectUpgraded((id) => adapters.storage.agents.get({ workspaceId: WS }, id));
  });

  it('after the upgrade, a change of configuration keeps the settings and its event carries them', async () => {
    const prefix = prefixFor();
    await writeOldAgents(client(), prefix);
    const adapters = redisAdapters({ client: client(), prefix });
    await adapters.ready();
    const event = new Records().draft(WS, 'agent.updated');
    const change = { set: { configuration: { replaced: true } }, event };
    const result = await adapters.storage.agents.update({ workspaceId: WS }, 'agt_settings', change);
    const expected = { configuration: { replaced: true }, tools: [tool], maxSteps: 3, autoReply: false };
    expect(result?.record).toMatchObject(expected);
    const { events } = (await adapters.storage.events.list({ workspaceId: WS }, { limit: 10 }))!;
    expect(events.at(-1)?.data).toMatchObject(expected);
  });
}

describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis())('agent settings upgrade on Redis', () => {
  let client: Redis;
  const prefixes: string[] = [];
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client, prefix);
    await client.quit();
  });
  upgradeTests(
    () => client,
    () => {
      const prefix = uniquePrefix('upgrade');
      prefixes.push(prefix);
      return prefix;
    },
  );
});

const clusterProblem = await probeRedisBinaries();
const describeCluster = describeIfAvailable('A private Redis Cluster (redis-server, redis-cli)', clusterProblem);
describeCluster('agent settings upgrade on Redis Cluster', () => {
  let cluster: RedisClusterProcesses | undefined;
  let client: Cluster;
  let made = 0;
  beforeAll(async () => {
    cluster = await startCluster();
    client = new Cluster(cluster.nodes);
  }, 60_000);
  afterAll(async () => {
    await client?.quit();
    await cluster?.stop();
  }, 30_000);
  // The cluster is private and torn down afterwards: a prefix per test keeps them apart.
  upgradeTests(
    () => client,
    () => `parley-upgrade-${++made}:`,
  );
});
