/**
 * @module The Redis variables of the server configuration: `REDIS_URL` or `REDIS_CLUSTER_NODES`
 * (one of them switches storage, rate limits and API keys to Redis) and `REDIS_PREFIX`.
 */
import * as v from 'valibot';

/** A Redis Cluster seed node. */
export interface ClusterNode {
  host: string;
  port: number;
}

/** Where the server keeps its data when Redis is configured; `prefix` starts every key. */
export type RedisConfig = { url: string; prefix: string } | { clusterNodes: ClusterNode[]; prefix: string };

/** The prefix when `REDIS_PREFIX` is unset (the adapters' default too). */
const DEFAULT_REDIS_PREFIX = 'parley:';

const UrlSchema = v.pipe(
  v.string(),
  v.check(
    (value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol),
    'Expected a redis:// or rediss:// URL.',
  ),
);

const NODES_MESSAGE = 'Expected comma-separated host:port pairs, e.g. 10.0.0.1:6379,10.0.0.2:6379.';
/** `host:port` with a host name or IPv4 address, or `[IPv6]:port`. */
const NODE = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

function parseNodes(raw: string): ClusterNode[] | undefined {
  const nodes: ClusterNode[] = [];
  for (const item of raw.split(',')) {
    const match = NODE.exec(item.trim());
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65_535) return undefined;
    nodes.push({ host: (match[1] ?? match[2])!, port });
  }
  return nodes;
}

// Braces would move the Cluster hash tag that keeps a workspace's keys on one slot.
const PrefixSchema = v.pipe(v.string(), v.regex(/^[^\s{}]{1,64}$/, 'Expected 1–64 characters without spaces, { or }.'));

/**
 * Reads `REDIS_URL`, `REDIS_CLUSTER_NODES` and `REDIS_PREFIX` from `env` (empty counts as unset),
 * appending a message per problem to `problems` — never a value, since a URL may hold a password.
 * Returns `undefined` for memory storage or when there were problems.
 */
export function readRedisConfig(env: Record<string, string | undefined>, problems: string[]): RedisConfig | undefined {
  const get = (name: string) => (env[name] === '' ? undefined : env[name]);
  const [url, nodes, prefix] = [get('REDIS_URL'), get('REDIS_CLUSTER_NODES'), get('REDIS_PREFIX')];
  const before = problems.length;
  if (url !== undefined && !v.is(UrlSchema, url)) problems.push('REDIS_URL: Expected a redis:// or rediss:// URL.');
  const clusterNodes = nodes === undefined ? undefined : parseNodes(nodes);
  if (nodes !== undefined && clusterNodes === undefined) problems.push(`REDIS_CLUSTER_NODES: ${NODES_MESSAGE}`);
  if (url !== undefined && nodes !== undefined) {
    problems.push(
      'REDIS_URL, REDIS_CLUSTER_NODES: Set one of them, not both (REDIS_URL for one server, REDIS_CLUSTER_NODES for a Cluster).',
    );
  }
  if (prefix !== undefined && !v.is(PrefixSchema, prefix))
    problems.push('REDIS_PREFIX: Expected 1–64 characters without spaces, { or }.');
  if (prefix !== undefined && url === undefined && nodes === undefined) {
    problems.push('REDIS_PREFIX: Only used with REDIS_URL or REDIS_CLUSTER_NODES, and neither is set.');
  }
  if (problems.length > before) return undefined;
  const keyPrefix = prefix ?? DEFAULT_REDIS_PREFIX;
  if (url !== undefined) return { url, prefix: keyPrefix };
  if (clusterNodes !== undefined) return { clusterNodes, prefix: keyPrefix };
  return undefined;
}

/** How to name `config` in messages and logs: the URL with any password masked, or the nodes. */
export function describeRedis(config: RedisConfig): string {
  if ('clusterNodes' in config) {
    return `Redis Cluster ${config.clusterNodes.map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)).join(',')}`;
  }
  const url = new URL(config.url);
  if (url.password !== '') url.password = '***';
  return `Redis ${url.toString()}`;
}
