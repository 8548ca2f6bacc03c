/** @module Tests of `entityTag` and `checkIfMatch` (RFC 9110 §8.8.3, §13.1.1). */
import { describe, expect, it } from 'vitest';
import { isParleyError } from '../errors.js';
import { frozenCopy } from '../frozen-records.js';
import { checkIfMatch, entityTag } from './entity-tag.js';

const resource = { id: 'agt_1', name: 'Ada', configuration: { b: 1, a: [1, { y: 2, x: 1 }] } };

function thrown(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('entityTag', () => {
  it('is a quoted strong tag that ignores key order and changes with any value', () => {
    const tag = entityTag(resource);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(entityTag({ configuration: { a: [1, { x: 1, y: 2 }], b: 1 }, name: 'Ada', id: 'agt_1' })).toBe(tag);
    expect(entityTag({ ...resource, name: 'Ada ' })).not.toBe(tag);
    expect(entityTag({ ...resource, configuration: { b: 1, a: [{ y: 2, x: 1 }, 1] } })).not.toBe(tag);
    expect(entityTag({ ...resource, extra: null })).not.toBe(tag);
  });

  it('serves a deep-frozen resource the tag of its contents, and never caches a resource that can change', () => {
    const frozen = frozenCopy(resource);
    expect(entityTag(frozen)).toBe(entityTag(resource));
    expect(entityTag(frozen)).toBe(entityTag(resource));
    // Frozen on top, changeable inside: tagged afresh each time.
    const inner = { b: 1, a: [1, { y: 2, x: 1 }] };
    const shallow = Object.freeze({ ...resource, configuration: inner });
    const before = entityTag(shallow);
    inner.b = 2;
    expect(entityTag(shallow)).not.toBe(before);
    const open = { ...resource };
    const first = entityTag(open);
    open.name = 'Grace';
    expect(entityTag(open)).not.toBe(first);
  });
});

describe('checkIfMatch', () => {
  const tag = entityTag(resource);

  it('passes without If-Match, with *, with the tag, and with a list holding it', () => {
    for (const ifMatch of [undefined, '*', ' * ', tag, `"other", ${tag}`, `W/"x",${tag}`]) {
      expect(thrown(() => checkIfMatch(ifMatch, resource)), String(ifMatch)).toBeUndefined();
    }
  });

  it('is precondition_failed with the current tag for another tag, or the tag marked weak', () => {
    for (const ifMatch of ['"other"', `W/${tag}`, '"a", "b"']) {
      const error = thrown(() => checkIfMatch(ifMatch, resource));
      expect(isParleyError(error, 'precondition_failed'), ifMatch).toBe(true);
      expect((error as { details?: unknown }).details).toEqual({ etag: tag });
    }
  });

  it('is invalid_request for a value that is not an If-Match field value', () => {
    for (const ifMatch of ['', 'abc', tag.slice(1), `${tag} junk`, '**', `*, ${tag}`]) {
      expect(isParleyError(thrown(() => checkIfMatch(ifMatch, resource)), 'invalid_request'), ifMatch).toBe(true);
    }
  });
});
