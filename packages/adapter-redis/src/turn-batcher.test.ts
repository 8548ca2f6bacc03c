/** @module TurnBatcher: what is added in one turn is sent together, by group, in batches of at most 500. */
import { describe, expect, it } from 'vitest';
import type { RedisRunner } from './connection.js';
import { TurnBatcher } from './turn-batcher.js';

/** A runner whose turn ends as Node's does when no socket is corked: in a `setImmediate`. */
const runner = { atTurnEnd: (fn: () => void) => void setImmediate(fn) } as unknown as RedisRunner;

describe('TurnBatcher', () => {
  it('sends what one turn added as one call per group, in the order added, and a later turn apart', async () => {
    const sent: string[][] = [];
    const batcher = new TurnBatcher<string>(runner, async (items) => void sent.push(items));
    await Promise.all([batcher.add('a', 'a1'), batcher.add('b', 'b1'), batcher.add('a', 'a2'), batcher.add('a', 'a3')]);
    await batcher.add('a', 'a4');
    expect(sent).toEqual([['a1', 'a2', 'a3'], ['b1'], ['a4']]);
  });

  it('resolves each add with its own entry of the results its call resolved with', async () => {
    const batcher = new TurnBatcher<number, string>(runner, async (items) => items.map((item) => `result of ${item}`));
    expect(await Promise.all([batcher.add('a', 1), batcher.add('b', 2), batcher.add('a', 3)])).toEqual([
      'result of 1',
      'result of 2',
      'result of 3',
    ]);
  });

  it('splits a group of more than 500 into calls of 500', async () => {
    const sizes: number[] = [];
    const batcher = new TurnBatcher<number>(runner, async (items) => void sizes.push(items.length));
    await Promise.all(Array.from({ length: 1_200 }, (_, i) => batcher.add('a', i)));
    expect(sizes).toEqual([500, 500, 200]);
  });

  it('rejects every add of a call that failed with its error, and no other', async () => {
    const failure = new Error('Redis is down');
    const batcher = new TurnBatcher<string>(runner, async (items) => {
      if (items[0] === 'bad') throw failure;
    });
    const settled = await Promise.allSettled([
      batcher.add('x', 'bad'),
      batcher.add('x', 'also in the call'),
      batcher.add('y', 'fine'),
    ]);
    expect(settled).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
      { status: 'fulfilled', value: undefined },
    ]);
  });

  it('flush sends what was added at once, and the turn then sends nothing more', async () => {
    const sent: string[][] = [];
    const batcher = new TurnBatcher<string>(runner, async (items) => void sent.push(items));
    const added = batcher.add('a', 'a1');
    await batcher.flush();
    await added;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([['a1']]);
  });
});
