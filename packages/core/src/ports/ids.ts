/** @module The id generator port and its default: prefixed, time-sortable ULIDs. */
import { randomFillSync } from 'node:crypto';
import { encodeTime, monotonicFactory } from 'ulid';

/** Type prefixes of every id Parley issues (docs/api.md#ids-timestamps-and-bodies). */
export type IdPrefix = 'agt' | 'conv' | 'msg' | 'wh' | 'evt' | 'key' | 'dlv' | 'call';

/** Issues unique ids that sort by creation time. */
export interface IdGenerator {
  /** A new id `<prefix>_<suffix>`; within one generator, strictly increasing per prefix. */
  next(prefix: IdPrefix): string;
}

/**
 * `<prefix>_<ULID>` — 48-bit millisecond time + 80 random bits, Crockford base32
 * (https://github.com/ulid/spec), monotonic within a millisecond so ids of one process never tie.
 * `now` supplies the time part (ms since the epoch).
 */
export function createUlidGenerator(now: () => number = Date.now): IdGenerator {
  const ulid = monotonicFactory(pooledRandom());
  return { next: (prefix) => `${prefix}_${ulid(now())}` };
}

/**
 * The PRNG `ulid` takes (a fraction in [0, 1) per character, from one random byte, as its own
 * default): bytes of the OS CSPRNG read 256 at a time, where the default asks for one per character.
 */
function pooledRandom(): () => number {
  const pool = new Uint8Array(256);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}

/**
 * The smallest id of `prefix` made at `ms` (since the epoch) or later, as ids sort: `<prefix>_`
 * and the ULID's 10 time digits. Every id of that prefix made before `ms` sorts below it, every
 * one made at `ms` or later from it up (a ULID's time comes first and sorts as it counts:
 * https://github.com/ulid/spec), so a store can find expired ids with a range of its id index.
 */
export function firstIdAt(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, Math.floor(ms)), 10)}`;
}
