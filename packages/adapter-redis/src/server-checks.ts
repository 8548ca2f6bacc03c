/**
 * @module What start-up checks on the Redis server (docs/redis.md): a connection the server refused
 * (its own error, e.g. `ERR DB index is out of range`, `WRONGPASS …`), which no retry fixes, and
 * settings under which Parley's records — the only copy of agents, conversations, messages, keys
 * and queued work — can be evicted or lost.
 */
import type { RedisClient } from './redis-client.js';

/** Server errors that pass with time (a loading or failing-over server), not a wrong setting. */
const TRANSIENT = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|MOVED|ASK)\b/;

/**
 * The server's error when `error` is one it answered while the connection was set up (AUTH,
 * SELECT, HELLO — ioredis reports them as `ReplyError`s and goes on, on database 0 after a failed
 * SELECT), and no retry would help; `undefined` otherwise.
 */
export function refusalOf(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError' || TRANSIENT.test(error.message)) return undefined;
  return error.message;
}

/** One server's answers that matter here. */
interface ServerSettings {
  maxmemoryPolicy: string | undefined;
  aof: boolean;
  /** `CONFIG GET save`; `undefined` where CONFIG is not allowed (managed services). */
  rdb: boolean | undefined;
}

/** `field:value` lines of an INFO section. */
function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

async function settingsOf(node: Pick<RedisClient, 'info' | 'call'>): Promise<ServerSettings> {
  const [memory, persistence] = await Promise.all([node.info('memory'), node.info('persistence')]);
  let rdb: boolean | undefined;
  try {
    const save = (await node.call('CONFIG', 'GET', 'save')) as string[];
    rdb = (save[1] ?? '').trim() !== '';
  } catch {
    rdb = undefined;
  }
  return {
    maxmemoryPolicy: infoField(memory, 'maxmemory_policy'),
    aof: infoField(persistence, 'aof_enabled') === '1',
    rdb,
  };
}

/**
 * Warnings about `client`'s server (each master of a Cluster): a `maxmemory-policy` other than
 * `noeviction` (Redis may evict Parley's records under memory pressure), and neither AOF nor RDB
 * persistence (a restart of Redis loses them all). Empty when all is well or nothing could be read.
 */
export async function durabilityWarnings(client: RedisClient): Promise<string[]> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [client];
  const warnings = new Set<string>();
  for (const node of nodes) {
    const settings = await settingsOf(node);
    if (settings.maxmemoryPolicy !== undefined && settings.maxmemoryPolicy !== 'noeviction') {
      warnings.add(
        `Redis maxmemory-policy is ${settings.maxmemoryPolicy}: under memory pressure Redis evicts keys, ` +
          "and Parley's records (agents, conversations, messages, API keys, queued deliveries and replies) " +
          'are evicted with them. Set maxmemory-policy noeviction.',
      );
    }
    if (!settings.aof && settings.rdb === false) {
      warnings.add(
        'Redis has neither AOF nor RDB persistence (appendonly no, save ""): ' +
          'a restart of Redis loses every Parley record. ' +
          'Turn on appendonly yes (or RDB snapshots).',
      );
    }
  }
  return [...warnings];
}
