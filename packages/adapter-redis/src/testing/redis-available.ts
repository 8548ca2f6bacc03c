/**
 * @module Test support: finding the shared Redis server, and the rule for when there is none.
 *
 * Tests never mock Redis. When it cannot be reached they fail under CI (`CI=true`: a missing
 * service is a broken pipeline, not a reason to go green) and are skipped loudly elsewhere.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';

/** The shared server: `REDIS_URL`, or the default local one. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** `null` when Redis at `url` answers PING within 2 s, else why not. */
export async function probeRedis(url: string = REDIS_URL): Promise<string | null> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let cause: unknown;
  client.on('error', (error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    // The socket error (ECONNREFUSED …) says more than "Connection is closed.".
    const reason = cause ?? error;
    return reason instanceof Error ? reason.message : String(reason);
  } finally {
    client.disconnect();
  }
}

/** The part of a test runner {@link describeIfAvailable} needs (vitest's, jest's, …). */
export interface SuiteRunner<Describe extends { skip: unknown }> {
  describe: Describe;
  it: (name: string, body: () => void) => unknown;
}

/**
 * `t.describe` when `problem` is `null`; otherwise, under CI, registers a failing test saying why
 * and returns `t.describe.skip`, and outside CI warns loudly and returns `t.describe.skip`. The
 * runner comes from the caller so this module does not depend on vitest:
 * `describeIfAvailable({ describe, it }, 'Redis', await probeRedis())`.
 */
export function describeIfAvailable<Describe extends { skip: unknown }>(
  t: SuiteRunner<Describe>,
  what: string,
  problem: string | null,
): Describe | Describe['skip'] {
  if (problem === null) return t.describe;
  const message = `${what} is unavailable (${problem}).`;
  if (process.env.CI === 'true') {
    (t.describe as unknown as (name: string, body: () => void) => void)(what, () => {
      t.it('is available (required when CI=true)', () => {
        throw new Error(`${message} CI=true requires it: start Redis or set REDIS_URL.`);
      });
    });
  } else {
    console.warn(
      `\n⚠️  ${'='.repeat(70)}\n⚠️  SKIPPING Redis tests: ${message}\n⚠️  Start redis-server or set REDIS_URL to run them.\n⚠️  ${'='.repeat(70)}\n`,
    );
  }
  return t.describe.skip;
}

/** A key prefix no other test uses. */
export function uniquePrefix(label = 'test'): string {
  return `parley-test:${label}:${randomUUID().slice(0, 8)}:`;
}

/**
 * Deletes every key under `prefix` (SCAN + UNLINK: fine in tests, never on a request path). On a
 * Cluster each master is scanned, and keys are unlinked one by one since they span slots.
 */
export async function deletePrefix(client: Redis | Cluster, prefix: string): Promise<void> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      if (client instanceof Cluster) await Promise.all(keys.map((key) => node.unlink(key)));
      else await node.unlink(...keys);
    } while (cursor !== '0');
  }
}

/** Every key under `prefix` (SCAN on each master; tests only). */
export async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

/** How many keys exist under `prefix` (SCAN; tests only). */
export async function countPrefix(client: Redis | Cluster, prefix: string): Promise<number> {
  return (await keysUnder(client, prefix)).length;
}
