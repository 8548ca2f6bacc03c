/**
 * @module The sandbox's plants on PostgreSQL or PGlite, in the `plants` and `plant_seeds` tables
 * of `@parley/adapter-postgres`'s migrations. Takes the bundle's `sql` (which already turns an
 * unreachable database into `service_unavailable`), so nothing here loads a driver.
 */
import type { Plant } from './plant-schemas.js';
import type { PlantStore } from './plant-store.js';

/** What `postgresAdapters()` exposes that the sandbox queries through. */
export interface PostgresConnection {
  /** One statement with `$1…` parameters, one round trip; rows as plain objects. */
  sql: { query<R extends Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]> };
  /** The schema holding the tables: a plain identifier, already checked by the adapter. */
  schema: string;
}

/** A {@link PlantStore} over `connection`: every method is one statement. */
export function postgresPlantStore({ sql, schema }: PostgresConnection): PlantStore {
  const s = `"${schema}"`;
  return {
    // The plant_seeds row decides: a second seeder waits on the first's insert, then does nothing.
    seed: async (workspaceId, plants) => {
      await sql.query(
        `WITH seeded AS (INSERT INTO ${s}.plant_seeds (workspace_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING 1)
         INSERT INTO ${s}.plants (workspace_id, id, name, tag)
         SELECT $1, (plant->>'id')::bigint, plant->>'name', plant->>'tag'
         FROM seeded, jsonb_array_elements($2::jsonb) AS plant ON CONFLICT DO NOTHING`,
        [workspaceId, JSON.stringify(plants)],
      );
    },
    list: async (workspaceId, limit) => {
      const rows = await sql.query<{ id: number; name: string; tag: string | null }>(
        `SELECT id, name, tag FROM ${s}.plants WHERE workspace_id = $1 ORDER BY id LIMIT $2`,
        [workspaceId, limit ?? null],
      );
      return rows.map(({ id, name, tag }): Plant => ({ id, name, ...(tag !== null && { tag }) }));
    },
    insert: async (workspaceId, plant) => {
      const rows = await sql.query(
        `INSERT INTO ${s}.plants (workspace_id, id, name, tag) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [workspaceId, plant.id, plant.name, plant.tag ?? null],
      );
      return rows.length > 0;
    },
    delete: async (workspaceId, id) =>
      (await sql.query(`DELETE FROM ${s}.plants WHERE workspace_id = $1 AND id = $2 RETURNING 1`, [workspaceId, id]))
        .length > 0,
  };
}
