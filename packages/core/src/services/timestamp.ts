/** @module ISO 8601 timestamps of the clock's readings, as every record and event carries them. */

let lastMs = Number.NaN;
let lastIso = '';

/**
 * `new Date(ms).toISOString()` (UTC with milliseconds, e.g. `2026-03-01T09:00:00.000Z`), with
 * the last result kept: a request stamps its record and its event within the same millisecond,
 * and a busy server stamps many requests in one, so most calls reuse the string.
 * @throws RangeError for a `ms` that is not a valid time, as `toISOString` does.
 */
export function isoTimestamp(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
