/**
 * @module Record versions: the internal counter of agents, conversations and webhook endpoints
 * that If-Match is decided on in a store's atomic step (ports/storage.ts, "Versions").
 *
 * The version travels with a record as a non-enumerable symbol property, so it is never part of
 * the record's JSON (the API never returns it), `{ ...record }` does not copy it (a record built
 * from another is not that stored version), and a frozen record can carry it.
 */

const VERSION = Symbol('parley.recordVersion');

/**
 * `record` with `version` attached (the same object, which must not be frozen yet); a store calls
 * it on every agent, conversation and webhook endpoint it hands out.
 */
export function withVersion<T extends object>(record: T, version: number): T {
  Object.defineProperty(record, VERSION, { value: version, enumerable: false, writable: false, configurable: false });
  return record;
}

/** The version a store attached to `record`, or `0` when it has none (messages, built records). */
export function recordVersion(record: object): number {
  return (record as { [VERSION]?: number })[VERSION] ?? 0;
}
