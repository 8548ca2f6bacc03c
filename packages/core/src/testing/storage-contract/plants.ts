/** @module Storage contract: the plant store of the sandbox. */
import type { Storage } from '../../ports/storage.js';
import type { Plant } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { mutateResult, WS } from './fixtures.js';

const CATALOGUE: readonly Plant[] = [
  { id: 30, name: 'Fern', tag: 'houseplant' },
  { id: 4, name: 'Basil' },
  { id: 17, name: 'Lavender', tag: 'shrub' },
  { id: 9, name: 'Aloe vera', tag: 'succulent' },
];
const ASCENDING = [...CATALOGUE].sort((a, b) => a.id - b.id);
const OTHER_CATALOGUE: readonly Plant[] = [{ id: 2, name: 'Cactus', tag: 'succulent' }];

/** @internal Registers the tests of `storage.plants`. */
export function plantTests(t: ContractTestApi, open: () => Promise<OpenedFixture<Storage>>, skip: readonly string[]): void {
  const { expect } = t;
  contractGroup(t, 'plants', open, skip, (test) => {
    test('a workspace that was never seeded has no plants', async (storage) => {
      expect(await storage.plants.list(WS)).toEqual([]);
      expect(await storage.plants.list(WS, 10)).toEqual([]);
    });

    test('seed adds the plants; list returns them by ascending id, a plant without tag has none', async (storage) => {
      await storage.plants.seed(WS, CATALOGUE);
      const plants = await storage.plants.list(WS);
      expect(plants).toEqual(ASCENDING);
      expect('tag' in plants[0]!).toBe(false);
    });

    test('list returns at most `limit` plants, none for 0, all for a limit above the count', async (storage) => {
      await storage.plants.seed(WS, CATALOGUE);
      expect(await storage.plants.list(WS, 0)).toEqual([]);
      expect(await storage.plants.list(WS, 1)).toEqual(ASCENDING.slice(0, 1));
      expect(await storage.plants.list(WS, 3)).toEqual(ASCENDING.slice(0, 3));
      expect(await storage.plants.list(WS, 4)).toEqual(ASCENDING);
      expect(await storage.plants.list(WS, 2_147_483_647)).toEqual(ASCENDING);
      expect(await storage.plants.list(WS, undefined)).toEqual(ASCENDING);
    });

    test('seed acts only the first time for a workspace', async (storage) => {
      await storage.plants.seed(WS, CATALOGUE);
      await storage.plants.seed(WS, CATALOGUE);
      await storage.plants.seed(WS, OTHER_CATALOGUE);
      expect(await storage.plants.list(WS)).toEqual(ASCENDING);
    });

    test('seed does nothing once the seeded plants were all deleted', async (storage) => {
      await storage.plants.seed(WS, CATALOGUE);
      for (const plant of CATALOGUE) expect(await storage.plants.delete(WS, plant.id)).toBe(true);
      await storage.plants.seed(WS, CATALOGUE);
      expect(await storage.plants.list(WS)).toEqual([]);
    });

    test('concurrent seeds add the catalogue exactly once', async (storage) => {
      await Promise.all(Array.from({ length: 8 }, (_, index) => storage.plants.seed(WS, index % 2 === 0 ? CATALOGUE : OTHER_CATALOGUE)));
      const plants = await storage.plants.list(WS);
      const matchesOne = JSON.stringify(plants) === JSON.stringify(ASCENDING) || JSON.stringify(plants) === JSON.stringify(OTHER_CATALOGUE);
      expect(matchesOne, `plants after concurrent seeds: ${JSON.stringify(plants)}`).toBe(true);
    });

    test('insert adds a plant in id order; a plant with a taken id is refused and nothing is written', async (storage) => {
      await storage.plants.seed(WS, CATALOGUE);
      expect(await storage.plants.insert(WS, { id: 10, name: 'Mint', tag: 'herb' })).toBe(true);
      expect(await storage.plants.insert(WS, { id: 10, name: 'Impostor' })).toBe(false);
      expect(await storage.plants.insert(WS, { id: 4, name: 'Not basil', tag: 'weed' })).toBe(false);
      expect(await storage.plants.list(WS)).toEqual([
        { id: 4, name: 'Basil' },
        { id: 9, name: 'Aloe vera', tag: 'succulent' },
        { id: 10, name: 'Mint', tag: 'herb' },
        { id: 17, name: 'Lavender', tag: 'shrub' },
        { id: 30, name: 'Fern', tag: 'houseplant' },
      ]);
    });

    test('ids are compared as numbers, not as text', async (storage) => {
      for (const id of [100, 9, 20, 1]) expect(await storage.plants.insert(WS, { id, name: `Plant ${id}` })).toBe(true);
      expect((await storage.plants.list(WS)).map((plant) => plant.id)).toEqual([1, 9, 20, 100]);
      expect((await storage.plants.list(WS, 2)).map((plant) => plant.id)).toEqual([1, 9]);
    });

    test('delete returns true once, then false', async (storage) => {
      await storage.plants.seed(WS, CATALOGUE);
      expect(await storage.plants.delete(WS, 17)).toBe(true);
      expect(await storage.plants.delete(WS, 17)).toBe(false);
      expect(await storage.plants.delete(WS, 12345)).toBe(false);
      expect(await storage.plants.list(WS)).toEqual(ASCENDING.filter((plant) => plant.id !== 17));
      expect(await storage.plants.insert(WS, { id: 17, name: 'Lavender again' })).toBe(true);
    });

    test('plants handed out do not alias stored state: mutating an input or a result changes nothing stored', async (storage) => {
      const plant: Plant = { id: 5, name: 'Monstera', tag: 'houseplant' };
      await storage.plants.insert(WS, plant);
      plant.name = 'mutated input';
      const [listed] = await storage.plants.list(WS);
      mutateResult(() => (listed!.tag = 'mutated result'));
      const seedInput = [{ id: 6, name: 'Ivy' }];
      await storage.plants.seed(WS, seedInput);
      seedInput[0]!.name = 'mutated seed';
      const all = await storage.plants.list(WS);
      expect(all).toEqual([
        { id: 5, name: 'Monstera', tag: 'houseplant' },
        { id: 6, name: 'Ivy' },
      ]);
      await storage.plants.delete(WS, 5);
      expect(all).toHaveLength(2);
    });
  });
}
