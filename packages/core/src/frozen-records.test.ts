import { describe, expect, it } from 'vitest';
import { frozenCopy } from './frozen-records.js';

describe('frozenCopy', () => {
  it('copies a JSON value and freezes every object and array in the copy, leaving the input as it was', () => {
    const input = {
      id: 'agt_1',
      tags: ['a', { deep: [1, 2] }],
      metadata: { nested: { level: 3 } },
      none: null,
      gone: undefined,
    };
    const copy = frozenCopy(input);
    expect(copy).toEqual(input);
    expect(copy).not.toBe(input);
    expect(Object.keys(copy)).toEqual(Object.keys(input));
    for (const part of [
      copy,
      copy.tags,
      copy.tags[1],
      (copy.tags[1] as { deep: number[] }).deep,
      copy.metadata,
      copy.metadata.nested,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(Object.isFrozen(input) || Object.isFrozen(input.metadata) || Object.isFrozen(input.tags)).toBe(false);
    expect(() => ((copy.metadata.nested as { level: number }).level = 4)).toThrow(TypeError);
    expect(() => copy.tags.push('b')).toThrow(TypeError);
    input.metadata.nested.level = 5;
    expect(copy.metadata.nested.level).toBe(3);
  });

  it('copies a shallowly frozen input whose insides can still change', () => {
    const inner = { level: 1 };
    const input = Object.freeze({ inner });
    const copy = frozenCopy(input);
    expect(copy).not.toBe(input);
    inner.level = 2;
    expect(copy.inner.level).toBe(1);
  });

  it('keeps a "__proto__" key of parsed JSON as an own field, not as the prototype', () => {
    const input = JSON.parse('{"metadata":{"__proto__":{"polluted":true}}}') as { metadata: Record<string, unknown> };
    const copy = frozenCopy(input);
    expect(Object.getPrototypeOf(copy.metadata)).toBe(Object.prototype);
    expect(Object.keys(copy.metadata)).toEqual(['__proto__']);
    expect(copy.metadata['polluted']).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(input));
  });

  it('returns primitives as they are', () => {
    expect(frozenCopy('text')).toBe('text');
    expect(frozenCopy(42)).toBe(42);
    expect(frozenCopy(null)).toBeNull();
  });
});
