/** @module The sandbox's own store port, `PlantStore`, and its in-memory implementation. */
import type { Plant } from './plant-schemas.js';

/**
 * Each workspace's plants, keyed by their numeric id. Every method is one atomic step of its
 * backend; plants handed in or out are copies (no caller aliases stored state).
 */
export interface PlantStore {
  /**
   * Adds `plants` the first time it is called for a workspace; later calls do nothing, even
   * once those plants were deleted. Safe to call concurrently.
   */
  seed(workspaceId: string, plants: readonly Plant[]): Promise<void>;
  /** The workspace's plants by ascending id, at most `limit` (all when absent). */
  list(workspaceId: string, limit?: number): Promise<Plant[]>;
  /** `false` (nothing written) when a plant with this id exists. */
  insert(workspaceId: string, plant: Plant): Promise<boolean>;
  /** `false` when there was no plant with this id. */
  delete(workspaceId: string, id: number): Promise<boolean>;
}

/** A {@link PlantStore} in this process's memory. */
export function memoryPlantStore(): PlantStore {
  const workspaces = new Map<string, Map<number, Plant>>();
  const seeded = new Set<string>();
  const of = (workspaceId: string) => {
    let plants = workspaces.get(workspaceId);
    if (plants === undefined) workspaces.set(workspaceId, (plants = new Map()));
    return plants;
  };
  return {
    seed: async (workspaceId, plants) => {
      if (seeded.has(workspaceId)) return;
      seeded.add(workspaceId);
      for (const plant of plants) of(workspaceId).set(plant.id, { ...plant });
    },
    list: async (workspaceId, limit) => {
      const plants = [...of(workspaceId).values()].sort((a, b) => a.id - b.id);
      return plants.slice(0, limit ?? plants.length).map((plant) => ({ ...plant }));
    },
    insert: async (workspaceId, plant) => {
      const plants = of(workspaceId);
      if (plants.has(plant.id)) return false;
      plants.set(plant.id, { ...plant });
      return true;
    },
    delete: async (workspaceId, id) => of(workspaceId).delete(id),
  };
}
