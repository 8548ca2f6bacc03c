/** @module Patches: only the fields a caller actually gave. */

/**
 * `changes` without the keys whose value is `undefined`. valibot keeps an optional key given as
 * `undefined` in its output, and spreading that over a stored record would erase the field
 * (`update(ws, id, { name: undefined })` from a TypeScript caller), so updates go through this.
 */
export function givenFields<T extends object>(changes: T): Partial<T> {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<T>;
}
