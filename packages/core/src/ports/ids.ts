/** @module The id generator port and its default: prefixed, time-sortable ULIDs. */
import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Type prefixes of every id Parley issues (docs/api.md#ids-timestamps-and-bodies). */
export type IdPrefix = 'agt' | 'conv' | 'msg' | 'wh' | 'evt' | 'key' | 'dlv';

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
