/** @module Tests of `entityTag`, `ifMatchVersions` and `checkIfMatch` (RFC 9110 §8.8.3, §13.1.1). */
import { describe, expect, it } from 'vitest';
import { isParleyError } from '../errors.js';
import { frozenCopy } from '../frozen-records.js';
import { recordVersion, withVersion } from '../record-version.js';
import { checkIfMatch, entityTag, ifMatchVersions } from './entity-tag.js';

const stored = (version: number, fields: object = {}) => withVersion({ id: 'agt_1', name: 'Ada', ...fields }, version);
const resource = stored(7);

function thrown(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('entityTag', () => {
  it('is a quoted strong tag of 24 characters that changes with the version and the id, not with the JSON', () => {
    const tag = entityTag(resource);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(entityTag(stored(7, { name: 'other' }))).toBe(tag);
    expect(entityTag(stored(8))).not.toBe(tag);
    expect(entityTag(withVersion({ id: 'agt_2' }, 7))).not.toBe(tag);
    // Tags of consecutive versions share nothing visible but the id part.
    expect(new Set([1, 2, 3, 256, 2 ** 40].map((version) => entityTag(stored(version)))).size).toBe(5);
  });

  it('keeps the version out of the JSON and out of copies', () => {
    expect(JSON.stringify(resource)).toBe('{"id":"agt_1","name":"Ada"}');
    expect(recordVersion({ ...resource })).toBe(0);
    expect(recordVersion(Object.freeze(resource))).toBe(7);
    expect(recordVersion(frozenCopy(resource))).toBe(0);
  });
});

describe('ifMatchVersions', () => {
  it('reads the versions of the tags of this resource, and nothing from other tags', () => {
    expect(ifMatchVersions(undefined, 'agt_1')).toBeUndefined();
    expect(ifMatchVersions(' * ', 'agt_1')).toBeUndefined();
    expect(ifMatchVersions(`${entityTag(stored(3))}, "x", ${entityTag(stored(2 ** 40))}`, 'agt_1')).toEqual([
      3,
      2 ** 40,
    ]);
    expect(ifMatchVersions(entityTag(stored(3)), 'agt_2')).toEqual([]);
    expect(ifMatchVersions(`W/${entityTag(stored(3))}`, 'agt_1')).toEqual([]);
  });
});

describe('checkIfMatch', () => {
  const tag = entityTag(resource);

  it('passes without If-Match, with *, with the tag, and with a list holding it', () => {
    for (const ifMatch of [undefined, '*', ' * ', tag, `"other", ${tag}`, `W/"x",${tag}`]) {
      expect(
        thrown(() => checkIfMatch(ifMatch, resource)),
        String(ifMatch),
      ).toBeUndefined();
    }
  });

  it('is precondition_failed with the current tag for another tag, or the tag marked weak', () => {
    for (const ifMatch of ['"other"', `W/${tag}`, '"a", "b"', entityTag(stored(6))]) {
      const error = thrown(() => checkIfMatch(ifMatch, resource));
      expect(isParleyError(error, 'precondition_failed'), ifMatch).toBe(true);
      expect((error as { details?: unknown }).details).toEqual({ etag: tag });
    }
  });

  it('is invalid_request for a value that is not an If-Match field value', () => {
    for (const ifMatch of ['', 'abc', tag.slice(1), `${tag} junk`, '**', `*, ${tag}`]) {
      expect(
        isParleyError(
          thrown(() => checkIfMatch(ifMatch, resource)),
          'invalid_request',
        ),
        ifMatch,
      ).toBe(true);
    }
  });
});
