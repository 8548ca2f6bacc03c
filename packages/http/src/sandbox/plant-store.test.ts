/**
 * @module The sandbox's `PlantStore` on every backend the ready-made server runs on — memory, Redis,
 * PostgreSQL and PGlite — chosen by `plantStoreFor` from the bundle, as the app chooses it. Same
 * tests on each (they were core's storage contract before the sandbox had a folder of its own).
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { postgresAdapters } from '@parley/adapter-postgres';
import {
  createTestDatabase,
  createTestPglite,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from '@parley/adapter-postgres/testing';
import { redisAdapters } from '@parley/adapter-redis';
import type { Adapters } from '@parley/core';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import type { Plant } from './plant-schemas.js';
import { plantStoreFor } from './plant-store-for.js';
import type { PlantStore } from './plant-store.js';

const CATALOGUE: readonly Plant[] = [
  { id: 30, name: 'Fern', tag: 'houseplant' },
  { id: 4, name: 'Basil' },
  { id: 17, name: 'Lavender', tag: 'shrub' },
  { id: 9, name: 'Aloe vera', tag: 'succulent' },
];
const ASCENDING = [...CATALOGUE].sort((a, b) => a.id - b.id);
const OTHER_CATALOGUE: readonly Plant[] = [{ id: 2, name: 'Cactus', tag: 'succulent' }];

/** Runs `mutate`; a frozen result refusing it (TypeError) is as good as a copy. */
function mutateResult(mutate: () => void): void {
  try {
    mutate();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

/** A backend: a bundle over it (a second one reaches the same data when `durable`), and cleanup. */
interface Backend {
  name: string;
  describe: ReturnType<typeof describeIfAvailable>;
  open(): Promise<Adapters>;
  durable: boolean;
  cleanup(): Promise<void>;
}

const opened: Adapters[] = [];
const track = async (adapters: Adapters) => {
  opened.push(adapters);
  await adapters.ready();
  return adapters;
};

const redisProblem = await probeRedis();
const postgresProblem = await probePostgres();
const redisPrefix = uniquePrefix('plants');
let database: Promise<TestDatabase> | undefined;
let pglite: Promise<TestPglite> | undefined;

const BACKENDS: Backend[] = [
  { name: 'memory', describe: describe, durable: false, open: async () => memoryAdapters(), cleanup: async () => {} },
  {
    name: 'Redis',
    describe: describeIfAvailable(`Redis at ${REDIS_URL}`, redisProblem),
    durable: true,
    open: () => track(redisAdapters({ url: REDIS_URL, prefix: redisPrefix })),
    cleanup: async () => {
      const { Redis } = await import('ioredis');
      const client = new Redis(REDIS_URL);
      await deletePrefix(client, redisPrefix);
      client.disconnect();
    },
  },
  {
    name: 'PostgreSQL',
    describe: describeIfAvailable('PostgreSQL', postgresProblem),
    durable: true,
    open: async () =>
      track(
        postgresAdapters({ connectionString: (await (database ??= createTestDatabase())).url, sweepIntervalMs: 0 }),
      ),
    cleanup: async () => (await database)?.drop(),
  },
  {
    name: 'PGlite',
    describe: describe,
    durable: true,
    open: async () =>
      track(postgresAdapters({ pglite: (await (pglite ??= createTestPglite())).db, sweepIntervalMs: 0 })),
    cleanup: async () => (await pglite)?.close(),
  },
];

afterAll(async () => {
  for (const adapters of opened.splice(0)) await adapters.close();
  for (const backend of BACKENDS) await backend.cleanup();
});

for (const backend of BACKENDS) {
  backend.describe(`PlantStore on ${backend.name}`, () => {
    let store: PlantStore;
    // Fresh workspaces per test: the bundle (and its data) is shared by the file's tests.
    let WS: string;
    let OTHER_WS: string;
    let bundle: Promise<Adapters> | undefined;
    const fresh = async () => {
      const adapters = await (bundle ??= backend.open());
      store = plantStoreFor(adapters);
      WS = `ws_${randomUUID()}`;
      OTHER_WS = `ws_${randomUUID()}`;
    };

    beforeEach(fresh);

    it('a workspace that was never seeded has no plants', async () => {
      expect(await store.list(WS)).toEqual([]);
      expect(await store.list(WS, 10)).toEqual([]);
    });

    it('seed adds the plants; list returns them by ascending id, a plant without tag has none', async () => {
      await store.seed(WS, CATALOGUE);
      const plants = await store.list(WS);
      expect(plants).toEqual(ASCENDING);
      expect('tag' in plants[0]!).toBe(false);
    });

    it('list returns at most `limit` plants, none for 0, all for a limit above the count', async () => {
      await store.seed(WS, CATALOGUE);
      expect(await store.list(WS, 0)).toEqual([]);
      expect(await store.list(WS, 1)).toEqual(ASCENDING.slice(0, 1));
      expect(await store.list(WS, 3)).toEqual(ASCENDING.slice(0, 3));
      expect(await store.list(WS, 4)).toEqual(ASCENDING);
      expect(await store.list(WS, 2_147_483_647)).toEqual(ASCENDING);
      expect(await store.list(WS, undefined)).toEqual(ASCENDING);
    });

    it('seed acts only the first time for a workspace', async () => {
      await store.seed(WS, CATALOGUE);
      await store.seed(WS, CATALOGUE);
      await store.seed(WS, OTHER_CATALOGUE);
      expect(await store.list(WS)).toEqual(ASCENDING);
    });

    it('seed does nothing once the seeded plants were all deleted', async () => {
      await store.seed(WS, CATALOGUE);
      for (const plant of CATALOGUE) expect(await store.delete(WS, plant.id)).toBe(true);
      await store.seed(WS, CATALOGUE);
      expect(await store.list(WS)).toEqual([]);
    });

    it('concurrent seeds add the catalogue exactly once', async () => {
      await Promise.all(
        Array.from({ length: 8 }, (_, index) => store.seed(WS, index % 2 === 0 ? CATALOGUE : OTHER_CATALOGUE)),
      );
      const plants = await store.list(WS);
      const matchesOne =
        JSON.stringify(plants) === JSON.stringify(ASCENDING) ||
        JSON.stringify(plants) === JSON.stringify(OTHER_CATALOGUE);
      expect(matchesOne, `plants after concurrent seeds: ${JSON.stringify(plants)}`).toBe(true);
    });

    it('insert adds a plant in id order; a plant with a taken id is refused and nothing is written', async () => {
      await store.seed(WS, CATALOGUE);
      expect(await store.insert(WS, { id: 10, name: 'Mint', tag: 'herb' })).toBe(true);
      expect(await store.insert(WS, { id: 10, name: 'Impostor' })).toBe(false);
      expect(await store.insert(WS, { id: 4, name: 'Not basil', tag: 'weed' })).toBe(false);
      expect(await store.list(WS)).toEqual([
        { id: 4, name: 'Basil' },
        { id: 9, name: 'Aloe vera', tag: 'succulent' },
        { id: 10, name: 'Mint', tag: 'herb' },
        { id: 17, name: 'Lavender', tag: 'shrub' },
        { id: 30, name: 'Fern', tag: 'houseplant' },
      ]);
    });

    it('ids are compared as numbers, not as text', async () => {
      for (const id of [100, 9, 20, 1]) expect(await store.insert(WS, { id, name: `Plant ${id}` })).toBe(true);
      expect((await store.list(WS)).map((plant) => plant.id)).toEqual([1, 9, 20, 100]);
      expect((await store.list(WS, 2)).map((plant) => plant.id)).toEqual([1, 9]);
    });

    it('delete returns true once, then false', async () => {
      await store.seed(WS, CATALOGUE);
      expect(await store.delete(WS, 17)).toBe(true);
      expect(await store.delete(WS, 17)).toBe(false);
      expect(await store.delete(WS, 12345)).toBe(false);
      expect(await store.list(WS)).toEqual(ASCENDING.filter((plant) => plant.id !== 17));
      expect(await store.insert(WS, { id: 17, name: 'Lavender again' })).toBe(true);
    });

    it('plants handed out do not alias stored state: mutating an input or a result changes nothing', async () => {
      const plant: Plant = { id: 5, name: 'Monstera', tag: 'houseplant' };
      await store.insert(WS, plant);
      plant.name = 'mutated input';
      const [listed] = await store.list(WS);
      mutateResult(() => (listed!.tag = 'mutated result'));
      const seedInput = [{ id: 6, name: 'Ivy' }];
      await store.seed(WS, seedInput);
      seedInput[0]!.name = 'mutated seed';
      const all = await store.list(WS);
      expect(all).toEqual([
        { id: 5, name: 'Monstera', tag: 'houseplant' },
        { id: 6, name: 'Ivy' },
      ]);
      await store.delete(WS, 5);
      expect(all).toHaveLength(2);
    });

    it('seeding, inserting and deleting in one workspace leaves the other untouched', async () => {
      await store.seed(WS, [{ id: 1, name: 'Fern' }]);
      expect(await store.list(OTHER_WS)).toEqual([]);
      await store.seed(OTHER_WS, [{ id: 1, name: 'Cactus' }]);
      expect(await store.insert(OTHER_WS, { id: 2, name: 'Mint' })).toBe(true);
      expect(await store.insert(WS, { id: 2, name: 'Sage' })).toBe(true);
      expect(await store.delete(OTHER_WS, 1)).toBe(true);
      expect(await store.list(WS)).toEqual([
        { id: 1, name: 'Fern' },
        { id: 2, name: 'Sage' },
      ]);
      expect(await store.list(OTHER_WS)).toEqual([{ id: 2, name: 'Mint' }]);
    });

    it(`plantStoreFor gives one store per bundle; another bundle ${
      backend.durable ? 'sees the same plants' : 'has its own'
    }`, async () => {
      const adapters = await bundle!;
      expect(plantStoreFor(adapters)).toBe(store);
      expect(plantStoreFor({ ...adapters })).not.toBe(store);
      await store.insert(WS, { id: 7, name: 'Shared?' });
      const other = plantStoreFor(await backend.open());
      expect(await other.list(WS)).toEqual(backend.durable ? [{ id: 7, name: 'Shared?' }] : []);
    });
  });
}
