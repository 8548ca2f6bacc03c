/**
 * @module Example (f): mixing backends by replacing members of an adapter bundle. Each instance
 * keeps its records in memory, while rate limits and `Idempotency-Key`s live on one Redis, so
 * plan limits are exact across every instance (docs/architecture.md#mixing-backends).
 * Run it: `npm run build && REDIS_URL=redis://127.0.0.1:6379 npm start -w @parley-examples/mixed-backends`.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { redisAdapters } from '@parley/adapter-redis';
import { createCore, type Adapters, type Core, type CoreSettings } from '@parley/core';
import { fileURLToPath } from 'node:url';

/** One instance: its core, and `close()` for both bundles it took members from. */
export interface Instance {
  core: Core;
  close(): Promise<void>;
}

/**
 * An instance whose records are in this process's memory and whose rate limits and idempotency
 * keys are on the Redis at `redisUrl` under `prefix`.
 */
export function mixedInstance(redisUrl: string, prefix: string, settings: CoreSettings = {}): Instance {
  const memory = memoryAdapters();
  const redis = redisAdapters({ url: redisUrl, prefix });
  const adapters: Adapters = { ...memory, rateLimits: redis.rateLimits, idempotency: redis.idempotency };
  return {
    core: createCore(adapters, settings),
    close: async () => {
      await Promise.all([memory.close(), redis.close()]);
    },
  };
}

/** Two instances share a plan of 3 requests a minute: the fourth request is refused, whichever instance gets it. */
export async function main(
  redisUrl: string,
  log: (line: string) => void = console.log,
  prefix = 'parley-example-mixed:',
): Promise<void> {
  const plans: CoreSettings['plans'] = { free: { limit: 3, periodMs: 60_000 } };
  const instances = [mixedInstance(redisUrl, prefix, { plans }), mixedInstance(redisUrl, prefix, { plans })];
  try {
    const principal = {
      keyId: 'key_example',
      workspaceId: `acme-${Date.now()}`,
      plan: 'free' as const,
      scopes: ['*' as const],
    };
    for (let request = 0; request < 4; request += 1) {
      const instance = instances[request % 2]!;
      const { allowed, remaining } = await instance.core.rateLimiter.check(principal);
      log(
        `request ${request + 1} on instance ${(request % 2) + 1}: ${allowed ? `allowed, ${remaining} left` : 'refused'}`,
      );
    }
  } finally {
    await Promise.all(instances.map((instance) => instance.close()));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
