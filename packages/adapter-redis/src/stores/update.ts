/**
 * @module Compare-and-set on Redis without decoding JSON in Lua: read the raw stored JSON, decide
 * the change in TypeScript, and let a script write only if the stored JSON is still that string.
 */
import { ErrorCode, ParleyError, type Change, type Update } from '@parley/core';

/**
 * Attempts before an update that keeps losing races gives up. A write loses only to another
 * write that succeeded in between, so with N concurrent writers of one record each succeeds
 * within N attempts: 50 leaves room for bursts far beyond any API client's.
 */
export const UPDATE_ATTEMPTS = 50;

/** What a compare-and-set script answered. */
export type CasOutcome = 'ok' | 'gone' | 'changed';

/**
 * Runs `update` as a compare-and-set (the port's {@link Update}): reads the raw record, applies
 * `update`, and calls `write(current, change, raw)`, whose script writes only while the record
 * is still `raw` (a string of JSON, or what `decode` turns into the record); on 'changed' it starts again. Resolves with the record as stored afterwards (a
 * fresh copy), or `null` when there is none.
 * @throws whatever `update` throws (nothing written); ParleyError `service_unavailable` after
 *   {@link UPDATE_ATTEMPTS} lost races, or when Redis cannot be reached.
 */
export async function compareAndSet<T, R = string>(
  read: () => Promise<R | null>,
  update: Update<T>,
  write: (current: T, change: Change<T>, raw: R) => Promise<CasOutcome>,
  decode: (raw: R) => T = (raw) => JSON.parse(raw as string) as T,
): Promise<T | null> {
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
    const raw = await read();
    if (raw === null) return null;
    const current = decode(raw);
    const change = update(decode(raw));
    if (change === null) return current;
    const outcome = await write(current, change, raw);
    if (outcome === 'gone') return null;
    if (outcome === 'ok') return JSON.parse(JSON.stringify(change.record)) as T;
  }
  throw new ParleyError(ErrorCode.serviceUnavailable, 'The record kept changing during the update; try again.');
}
