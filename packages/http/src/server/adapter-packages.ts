/**
 * @module Imports the adapter package of the backend the server is configured for.
 * `@parley/adapter-postgres` and `@parley/adapter-redis` are optional peer dependencies of
 * `@parley/http` (docs/installing.md): an app that mounts `createApp` installs no database driver
 * it did not choose, and the server loads the package its configuration names only when it starts
 * on it — Knex's and TypeORM's convention for drivers.
 */
import type { DatabaseConfig } from '../cli/database-config.js';
import type { RedisConfig } from '../cli/redis-config.js';

/** The configured backend's adapter package is not installed; the message is one line saying what to install. */
export class MissingAdapterError extends Error {
  override name = 'MissingAdapterError';
}

/**
 * `@parley/adapter-postgres`, which `database` (`DATABASE_URL` or `DATA_DIR`) needs.
 * @throws MissingAdapterError when it is not installed
 */
export function importPostgresAdapter(database: DatabaseConfig): Promise<typeof import('@parley/adapter-postgres')> {
  const setting = 'dataDir' in database ? 'DATA_DIR' : 'DATABASE_URL';
  return importAdapter(() => import('@parley/adapter-postgres'), '@parley/adapter-postgres', setting);
}

/**
 * `@parley/adapter-redis`, which `redis` (`REDIS_URL` or `REDIS_CLUSTER_NODES`) needs.
 * @throws MissingAdapterError when it is not installed
 */
export function importRedisAdapter(redis: RedisConfig): Promise<typeof import('@parley/adapter-redis')> {
  const setting = 'url' in redis ? 'REDIS_URL' : 'REDIS_CLUSTER_NODES';
  return importAdapter(() => import('@parley/adapter-redis'), '@parley/adapter-redis', setting);
}

async function importAdapter<T>(load: () => Promise<T>, name: string, setting: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const failure = error as { code?: unknown; message?: unknown } | undefined;
    // Only the package itself missing: a driver missing inside it (pg, ioredis) is a broken install, reported as is.
    if (failure?.code === 'ERR_MODULE_NOT_FOUND' && String(failure.message).includes(`'${name}'`)) {
      throw new MissingAdapterError(`${setting} needs ${name}, which is not installed: npm install ${name}`);
    }
    throw error;
  }
}
