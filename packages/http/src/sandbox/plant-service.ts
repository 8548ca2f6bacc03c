/** @module The plants sandbox's service (plants-openapi.json): list, add and delete plants per workspace. */
import { ErrorCode, parse, ParleyError } from '@parley/core';
import {
  PlantCreateSchema,
  PlantIdSchema,
  PlantListQuerySchema,
  type Plant,
  type PlantCreateInput,
  type PlantListQuery,
} from './plant-schemas.js';
import type { PlantStore } from './plant-store.js';

/** The catalogue every workspace starts with. */
export const SAMPLE_PLANTS: readonly Plant[] = Object.freeze([
  { id: 1, name: 'Monstera', tag: 'houseplant' },
  { id: 2, name: 'Snake plant', tag: 'houseplant' },
  { id: 3, name: 'Basil', tag: 'herb' },
  { id: 4, name: 'Lavender', tag: 'shrub' },
  { id: 5, name: 'Aloe vera', tag: 'succulent' },
]);

/** The sandbox's plants over a {@link PlantStore}. Errors are `ParleyError`s; the sandbox app renders them flat. */
export class PlantService {
  /** Workspaces seeded by this process: seeding is once per workspace, so later calls skip the round trip. */
  private readonly seeded = new Set<string>();

  constructor(private readonly store: PlantStore) {}

  /** Plants by ascending id, at most `limit` (int32 ≥ 0) when given. @throws `validation_failed` */
  async list(workspaceId: string, query: PlantListQuery = {}): Promise<Plant[]> {
    const { limit } = parse(PlantListQuerySchema, query);
    await this.seed(workspaceId);
    return this.store.list(workspaceId, limit);
  }

  /** Adds a plant. @throws `validation_failed`; `conflict` when the id is taken */
  async create(workspaceId: string, input: PlantCreateInput): Promise<Plant> {
    const plant = parse(PlantCreateSchema, input);
    await this.seed(workspaceId);
    if (!(await this.store.insert(workspaceId, plant))) {
      throw new ParleyError(ErrorCode.conflict, `A plant with id ${plant.id} exists.`);
    }
    return plant;
  }

  /** Deletes a plant by its id (decimal digits, as in a path). @throws `validation_failed`, `not_found` */
  async delete(workspaceId: string, id: string): Promise<void> {
    const plantId = parse(PlantIdSchema, id);
    await this.seed(workspaceId);
    if (!(await this.store.delete(workspaceId, plantId))) throw ParleyError.notFound('plant', id);
  }

  /** Gives the workspace its sample catalogue the first time (the store makes that idempotent). */
  private async seed(workspaceId: string): Promise<void> {
    if (this.seeded.has(workspaceId)) return;
    await this.store.seed(workspaceId, SAMPLE_PLANTS);
    this.seeded.add(workspaceId);
  }
}
