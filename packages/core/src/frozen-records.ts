/**
 * @module Deep-frozen records: how an in-process store hands out records that cannot alias its
 * state without copying them on every read (ports/storage.ts, "Records handed out").
 *
 * A store keeps a deep-frozen copy of what it is given and hands that same object out on every
 * read; a change stores a new record (copy on write), so a record once handed out never changes,
 * and a caller cannot change it either (assigning to it throws in strict mode, which ESM always is).
 */

function freezeValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  let copy: Record<string, unknown> | unknown[];
  if (Array.isArray(value)) {
    copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) copy[i] = freezeValue(value[i]);
  } else {
    const object: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const field = freezeValue((value as Record<string, unknown>)[key]);
      // A JSON "__proto__" key is an own field; assigning it would set the prototype instead.
      if (key === '__proto__')
        Object.defineProperty(object, key, { value: field, enumerable: true, writable: true, configurable: true });
      else object[key] = field;
    }
    copy = object;
  }
  return Object.freeze(copy);
}

/**
 * A deep-frozen copy of `value`, a JSON-compatible value (plain objects, arrays, strings,
 * numbers, booleans, `null`; own enumerable fields are copied, `undefined` ones included).
 * `value` itself is left as it was. Everything is copied, even parts that are frozen already: a
 * frozen object may hold unfrozen ones. A store that knows a part is its own deep-frozen copy
 * shares it instead (`Object.freeze({ ...stored, updatedAt })`).
 */
export function frozenCopy<T>(value: T): T {
  return freezeValue(value) as T;
}
