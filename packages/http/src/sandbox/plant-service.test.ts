/** @module PlantService on the memory store: the sample catalogue, limits, create and delete. */
import { ParleyError } from '@parley/core';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { PlantSchema } from './plant-schemas.js';
import { PlantService, SAMPLE_PLANTS } from './plant-service.js';
import { memoryPlantStore } from './plant-store.js';

function setup() {
  return { plants: new PlantService(memoryPlantStore()) };
}

/** The `ParleyError` `promise` rejects with; any other outcome fails the test. */
async function rejection(promise: Promise<unknown>): Promise<ParleyError> {
  const error = await promise.then(
    () => new Error('Expected a rejection, but the promise resolved.'),
    (reason: unknown) => reason,
  );
  if (error instanceof ParleyError) return error;
  throw error;
}

const ids = (plants: ReadonlyArray<{ id: number }>) => plants.map((plant) => plant.id);

describe('PlantService', () => {
  it('starts every workspace with the sample catalogue, by ascending id', async () => {
    const core = setup();
    expect(SAMPLE_PLANTS.length).toBeGreaterThan(0);
    expect(await core.plants.list('ws1')).toEqual([...SAMPLE_PLANTS].sort((a, b) => a.id - b.id));
    expect(await core.plants.list('ws2')).toEqual(await core.plants.list('ws1'));
  });

  it('returns at most limit plants (int32 ≥ 0, number or digit string)', async () => {
    const core = setup();
    expect(await core.plants.list('ws1', { limit: 0 })).toEqual([]);
    expect(ids(await core.plants.list('ws1', { limit: 2 }))).toEqual(ids(SAMPLE_PLANTS).slice(0, 2));
    expect(ids(await core.plants.list('ws1', { limit: '3' }))).toEqual(ids(SAMPLE_PLANTS).slice(0, 3));
    expect(await core.plants.list('ws1', { limit: 2_147_483_647 })).toHaveLength(SAMPLE_PLANTS.length);
    for (const limit of [-1, '-1', 1.5, '1.5', 'ten', '', 2_147_483_648, '2147483648']) {
      const error = await rejection(core.plants.list('ws1', { limit } as never));
      expect(error.code, String(limit)).toBe('validation_failed');
    }
  });

  it('creates plants in id order and refuses a taken id with conflict', async () => {
    const core = setup();
    const firstSample = SAMPLE_PLANTS[0]!;
    expect(await core.plants.create('ws1', { id: 100, name: 'Mint', tag: 'herb' })).toEqual({
      id: 100,
      name: 'Mint',
      tag: 'herb',
    });
    expect(await core.plants.create('ws1', { id: 50, name: 'Sage' })).toEqual({ id: 50, name: 'Sage' });
    expect(ids(await core.plants.list('ws1'))).toEqual([...ids(SAMPLE_PLANTS), 50, 100]);
    expect((await rejection(core.plants.create('ws1', { id: 100, name: 'Other' }))).code).toBe('conflict');
    expect((await rejection(core.plants.create('ws1', { id: firstSample.id, name: 'Other' }))).code).toBe('conflict');
    expect((await core.plants.list('ws1')).find((plant) => plant.id === 100)).toEqual({
      id: 100,
      name: 'Mint',
      tag: 'herb',
    });
  });

  it('lists plants as PlantSchema documents them', async () => {
    for (const plant of await setup().plants.list('ws1')) expect(v.is(PlantSchema, plant)).toBe(true);
  });

  it('refuses a lone surrogate as it refuses every unstorable string', async () => {
    const error = await rejection(setup().plants.create('ws1', { id: 9, name: 'Fern', tag: '\ud800' }));
    expect(error.code).toBe('validation_failed');
    expect(error.details?.['issues']).toEqual([
      { path: 'tag', message: 'Must not contain U+0000 or an unpaired surrogate.' },
    ]);
  });

  it('refuses invalid plants with validation_failed', async () => {
    const core = setup();
    const inputs = [
      { id: 0, name: 'Zero' },
      { id: 1.5, name: 'Half' },
      { id: '7', name: 'Text id' },
      { id: 7, name: '' },
      { id: 7 },
      { id: 7, name: 'n'.repeat(257) },
      { id: 7, name: 'Tagged', tag: 't'.repeat(257) },
      { id: 7, name: 'Extra', colour: 'green' },
    ];
    for (const input of inputs) {
      expect(
        (await rejection(core.plants.create('ws1', input as never))).code,
        JSON.stringify(input).slice(0, 60),
      ).toBe('validation_failed');
    }
    expect(await core.plants.list('ws1')).toHaveLength(SAMPLE_PLANTS.length);
  });

  it('deletes a plant once; unknown ids are not_found and malformed ids validation_failed', async () => {
    const core = setup();
    const [first, ...rest] = SAMPLE_PLANTS;
    await core.plants.delete('ws1', String(first!.id));
    expect(ids(await core.plants.list('ws1'))).toEqual(ids(rest));
    expect((await rejection(core.plants.delete('ws1', String(first!.id)))).code).toBe('not_found');
    expect((await rejection(core.plants.delete('ws1', '999'))).code).toBe('not_found');
    for (const id of ['0', '-1', 'abc', '1.5', '']) {
      expect((await rejection(core.plants.delete('ws1', id))).code, id).toBe('validation_failed');
    }
  });

  it('does not bring the sample catalogue back once every plant was deleted', async () => {
    const core = setup();
    for (const plant of SAMPLE_PLANTS) await core.plants.delete('ws1', String(plant.id));
    expect(await core.plants.list('ws1')).toEqual([]);
    await core.plants.create('ws1', { id: 1, name: 'Replanted' });
    expect(await core.plants.list('ws1')).toEqual([{ id: 1, name: 'Replanted' }]);
  });

  it('keeps workspaces apart', async () => {
    const core = setup();
    await core.plants.create('ws1', { id: 77, name: 'Only in ws1' });
    await core.plants.delete('ws1', String(SAMPLE_PLANTS[1]!.id));
    expect(await core.plants.list('ws2')).toEqual([...SAMPLE_PLANTS]);
    expect((await rejection(core.plants.delete('ws2', '77'))).code).toBe('not_found');
    expect(await core.plants.create('ws2', { id: 77, name: 'Only in ws2' })).toEqual({ id: 77, name: 'Only in ws2' });
    expect((await core.plants.list('ws1')).find((plant) => plant.id === 77)).toEqual({ id: 77, name: 'Only in ws1' });
  });
});
