/** @module The plants sandbox on Redis: a HASH of records and a ZSET scored by the numeric id. */
import type { Plant, PlantStore } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys } from '../keys.js';
import { records, strings } from '../script.js';
import { PLANT_DELETE, PLANT_INSERT, PLANT_LIST, PLANT_SEED } from './plant-store.lua.js';

/** {@link PlantStore} on Redis: every method is one Lua script, so one atomic round trip. */
export class RedisPlantStore implements PlantStore {
  constructor(private readonly runner: RedisRunner) {}

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  /** The seeded flag and the plants are written in one script, so concurrent seeds add them once. */
  async seed(workspaceId: string, plants: readonly Plant[]): Promise<void> {
    const keys = this.keys(workspaceId);
    await this.runner.script(PLANT_SEED, {
      keys: { seeded: keys.plantsSeeded, plant: keys.plant, plants: keys.plants },
      args: { ids: plants.map((plant) => String(plant.id)), jsons: plants.map((plant) => JSON.stringify(plant)) },
    });
  }

  async list(workspaceId: string, limit?: number): Promise<Plant[]> {
    const keys = this.keys(workspaceId);
    return records<Plant>(strings(await this.runner.script(PLANT_LIST, { keys: { plants: keys.plants, plant: keys.plant }, args: { limit: limit ?? -1 } })));
  }

  async insert(workspaceId: string, plant: Plant): Promise<boolean> {
    const keys = this.keys(workspaceId);
    const reply = await this.runner.script(PLANT_INSERT, { keys: { plant: keys.plant, plants: keys.plants }, args: { id: String(plant.id), json: JSON.stringify(plant) } });
    return reply === 1;
  }

  async delete(workspaceId: string, id: number): Promise<boolean> {
    const keys = this.keys(workspaceId);
    return (await this.runner.script(PLANT_DELETE, { keys: { plant: keys.plant, plants: keys.plants }, args: { id: String(id) } })) === 1;
  }
}
