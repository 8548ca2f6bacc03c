/** @module The plants sandbox on PostgreSQL: a seed runs once per workspace, concurrent seeds included. */
import type { PlantStore } from '@parley/core';
import type { StoreContext } from './context.js';

/** `storage.plants` on PostgreSQL. */
export function plantStore({ sql, s }: StoreContext): PlantStore {
  return {
    // The plant_seeds row decides: a second seeder waits on the first's insert, then does nothing.
    seed: async (workspaceId, plants) => {
      await sql.query(
        `WITH seeded AS (INSERT INTO ${s}.plant_seeds (workspace_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING 1)
         INSERT INTO ${s}.plants (workspace_id, id, name, tag)
         SELECT $1, (plant->>'id')::bigint, plant->>'name', plant->>'tag' FROM seeded, jsonb_array_elements($2::jsonb) AS plant ON CONFLICT DO NOTHING`,
        [workspaceId, JSON.stringify(plants)],
      );
    },
    list: async (workspaceId, limit) =>
      (await sql.query<{ id: number; name: string; tag: string | null }>(`SELECT id, name, tag FROM ${s}.plants WHERE workspace_id = $1 ORDER BY id LIMIT $2`, [workspaceId, limit ?? null])).map(
        ({ id, name, tag }) => ({ id, name, ...(tag !== null && { tag }) }),
      ),
    insert: async (workspaceId, plant) =>
      (await sql.query(`INSERT INTO ${s}.plants (workspace_id, id, name, tag) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1`, [workspaceId, plant.id, plant.name, plant.tag ?? null])).length > 0,
    delete: async (workspaceId, id) => (await sql.query(`DELETE FROM ${s}.plants WHERE workspace_id = $1 AND id = $2 RETURNING 1`, [workspaceId, id])).length > 0,
  };
}
