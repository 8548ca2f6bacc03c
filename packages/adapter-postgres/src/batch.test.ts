/** @module The group commit of `Batcher`: what goes out together, in which order, and failures. */
import { describe, expect, it } from 'vitest';
import { Batcher } from './batch.js';

/** A `run` that answers each item doubled once `release()` is called, and remembers its batches. */
function gatedRun() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const run = (items: number[]) => {
    batches.push(items);
    return new Promise<number[]>((resolve) => gates.push(() => resolve(items.map((item) => item * 2))));
  };
  const release = async () => {
    while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
  };
  return { batches, run, release };
}

describe('Batcher', () => {
  it('sends what was added in one turn as one batch, and answers each caller its own result', async () => {
    const { batches, run, release } = gatedRun();
    const batcher = new Batcher(run);
    const results = Promise.all([1, 2, 3].map((item) => batcher.add(item)));
    await release();
    expect(await results).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('holds what is added while a batch is in flight, then sends it together, in order', async () => {
    const { batches, run, release } = gatedRun();
    const batcher = new Batcher(run);
    const first = batcher.add(1);
    await new Promise((resolve) => setImmediate(resolve)); // the first batch is in flight
    const later = [batcher.add(2), batcher.add(3)];
    await new Promise((resolve) => setImmediate(resolve));
    const alsoLater = batcher.add(4);
    expect(batches).toEqual([[1]]);
    await release();
    await release();
    expect(await Promise.all([first, ...later, alsoLater])).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('splits what waits into batches of at most maxBatch', async () => {
    const { batches, run, release } = gatedRun();
    const batcher = new Batcher(run, { maxBatch: 2 });
    const results = Promise.all([1, 2, 3, 4, 5].map((item) => batcher.add(item)));
    for (let i = 0; i < 3; i += 1) await release();
    expect(await results).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('rejects every call of a failed batch with its error, and goes on with the next', async () => {
    let calls = 0;
    const batcher = new Batcher(async (items: number[]) => {
      calls += 1;
      if (calls === 1) throw new Error('database gone');
      return items;
    });
    const failed = [batcher.add(1), batcher.add(2)].map((call) =>
      call.then(
        () => 'answered',
        (error: Error) => error.message,
      ),
    );
    expect(await Promise.all(failed)).toEqual(['database gone', 'database gone']);
    expect(await batcher.add(3)).toBe(3);
  });

  it('when failsWaiting holds for the error, also rejects what waited for the next batch, without sending it', async () => {
    const batches: number[][] = [];
    let fail!: (error: Error) => void;
    const batcher = new Batcher(
      (items: number[]) => {
        batches.push(items);
        return batches.length === 1 ? new Promise<number[]>((_, reject) => (fail = reject)) : Promise.resolve(items);
      },
      { failsWaiting: (error) => (error as Error).message === 'database gone' },
    );
    const first = batcher.add(1).catch((error: Error) => error.message);
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = batcher.add(2).catch((error: Error) => error.message);
    fail(new Error('database gone'));
    expect([await first, await waiting]).toEqual(['database gone', 'database gone']);
    expect(await batcher.add(3)).toBe(3);
    expect(batches).toEqual([[1], [3]]);
  });
});
