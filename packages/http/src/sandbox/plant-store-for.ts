/**
 * @module `plantStoreFor`: the sandbox's store on an adapter bundle's backend, found on the
 * bundle's public surface (docs/sandbox.md "Where the plants are kept").
 */
import type { Adapters } from '@parley/core';
import { memoryPlantStore, type PlantStore } from './plant-store.js';
import { postgresPlantStore, type PostgresConnection } from './postgres-plant-store.js';
import { redisPlantStore, type RedisConnection } from './redis-plant-store.js';

/** One store per bundle, so two apps over the same bundle (or core) see the same plants. */
const stores = new WeakMap<Adapters, PlantStore>();

/**
 * The sandbox's store on the backend of `adapters`, found on the bundle's public surface: Redis
 * (`redisAdapters()`'s `redis`), PostgreSQL or PGlite (`postgresAdapters()`'s `sql` and `schema`),
 * otherwise this process's memory. The same object for the same bundle.
 */
export function plantStoreFor(adapters: Adapters): PlantStore {
  let store = stores.get(adapters);
  if (store === undefined) stores.set(adapters, (store = chooseStore(adapters)));
  return store;
}

function chooseStore(adapters: Adapters & { redis?: RedisConnection } & Partial<PostgresConnection>): PlantStore {
  if (adapters.redis !== undefined) return redisPlantStore(adapters.redis);
  if (adapters.sql !== undefined && adapters.schema !== undefined) {
    return postgresPlantStore({ sql: adapters.sql, schema: adapters.schema });
  }
  return memoryPlantStore();
}
