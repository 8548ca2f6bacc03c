/** @module The plants sandbox on Redis: a HASH of records and a ZSET scored by the numeric id. */
import type { Plant, PlantStore } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys } from '../keys.js';
import { PLANT_INSERT, PLANT_LIST, PLANT_SEED } from '../scripts/plants.js';
import { REMOVE } from '../scripts/records.js';
import { records, strings } from '../scripts/script.js';

/** {@link PlantStore} on Redis: every method is one Lua script, so one atomic round trip. */
export class RedisPlantStore implements PlantStore {
  constructor(private readonly runner: RedisRunner) {}

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  /** The seeded flag and the plants are written in one script, so concurrent seeds add them once. */
  async seed(workspaceId: string, plants: readonly Plant[]): Promise<void> {
    const keys = this.keys(workspaceId);
    const args = plants.flatMap((plant) => [String(plant.id), JSON.stringify(plant)]);
    await this.runner.script(PLANT_SEED, [keys.plantsSeeded, keys.plant, keys.plants], args);
  }

  async list(workspaceId: string, limit?: number): Promise<Plant[]> {
    const keys = this.keys(workspaceId);
    return records<Plant>(strings(await this.runner.script(PLANT_LIST, [keys.plants, keys.plant], [limit ?? -1])));
  }

  async insert(workspaceId: string, plant: Plant): Promise<boolean> {
    const keys = this.keys(workspaceId);
    return (await this.runner.script(PLANT_INSERT, [keys.plant, keys.plants], [String(plant.id), JSON.stringify(plant)])) === 1;
  }

  async delete(workspaceId: string, id: number): Promise<boolean> {
    const keys = this.keys(workspaceId);
    return (await this.runner.script(REMOVE, [keys.plant, keys.plants], [String(id)])) !== null;
  }
}
