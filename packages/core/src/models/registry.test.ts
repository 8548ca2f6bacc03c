/** @module Model entries of `createCore({ models })`: a model alone or with its `contextWindow`. */
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../testing/scripted-model.js';
import { contextWindows, resolveModels } from './registry.js';

describe('model entries', () => {
  it('takes a model alone or as {model, contextWindow}, and reads each window', () => {
    const plain = scriptedModel([{ deltas: ['a'] }]);
    const windowed = scriptedModel([{ deltas: ['b'] }]);
    const models = { plain, big: { model: windowed, contextWindow: 131_072 }, bare: { model: plain } };
    expect([...resolveModels(models).keys()]).toEqual(['plain', 'big', 'bare']);
    expect(resolveModels(models).get('big')).toBe(windowed);
    expect(contextWindows(models)).toEqual(new Map([['big', 131_072]]));
  });

  it('refuses a contextWindow that is not an integer from 1 to 100 000 000, and an entry without a model', () => {
    const model = scriptedModel([{ deltas: ['a'] }]);
    for (const contextWindow of [0, 1.5, -3, 100_000_001, Number.NaN])
      expect(() => contextWindows({ m: { model, contextWindow } })).toThrow(RangeError);
    expect(() => resolveModels({ m: { model: {} as never } })).toThrow(TypeError);
  });
});
