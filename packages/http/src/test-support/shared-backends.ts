/**
 * @module Test helpers: the durable backends several `parley` processes can share — Redis and
 * PostgreSQL — so an end-to-end test runs once on each. Each hands out fresh, empty stores (a key
 * prefix; a schema in a database made for the test file) as the server's environment, and removes
 * them all in `cleanup()`. Not built.
 */
import { createTestDatabase, probePostgres, type TestDatabase } from '@parley/adapter-postgres/testing';
import { Redis } from 'ioredis';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from './redis.js';

/** One backend: its name, whether it answers, and fresh stores on it. */
export interface SharedBackend {
  /** `Redis` or `PostgreSQL`, for test titles. */
  name: string;
  /** `describe`, or a loud skip (failing under `CI=true`) when the backend does not answer. */
  describe: ReturnType<typeof describeIfAvailable>;
  /** The server environment naming a new, empty store (`label` shows up in its name). */
  fresh(label: string): Promise<Record<string, string>>;
  /** Removes every store `fresh` made; call after the processes using them were stopped. */
  cleanup(): Promise<void>;
}

function redisBackend(problem: string | null): SharedBackend {
  const prefixes: string[] = [];
  return {
    name: 'Redis',
    describe: describeIfAvailable(`Redis at ${REDIS_URL}`, problem),
    fresh: async (label) => {
      const prefix = uniquePrefix(label);
      prefixes.push(prefix);
      return { REDIS_URL, REDIS_PREFIX: prefix };
    },
    cleanup: async () => {
      if (prefixes.length === 0) return;
      const client = new Redis(REDIS_URL);
      try {
        for (const prefix of prefixes.splice(0)) await deletePrefix(client, prefix);
      } finally {
        client.disconnect();
      }
    },
  };
}

function postgresBackend(problem: string | null): SharedBackend {
  let database: Promise<TestDatabase> | undefined;
  let schemas = 0;
  return {
    name: 'PostgreSQL',
    describe: describeIfAvailable('PostgreSQL', problem),
    fresh: async (label) => {
      const { url } = await (database ??= createTestDatabase());
      schemas += 1;
      return { DATABASE_URL: url, PARLEY_SCHEMA: `${label.replace(/[^a-z0-9_]/g, '_').slice(0, 40)}_${schemas}` };
    },
    cleanup: async () => {
      const made = database;
      database = undefined;
      await (await made)?.drop();
    },
  };
}

/** Redis and PostgreSQL, each probed once (a test file awaits this at its top level). */
export async function sharedBackends(): Promise<SharedBackend[]> {
  const [redis, postgres] = await Promise.all([probeRedis(), probePostgres()]);
  return [redisBackend(redis), postgresBackend(postgres)];
}
