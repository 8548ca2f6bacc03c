/** @module The clock port. */

/** A source of the current time, replaceable in tests. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The system clock (`Date.now()`). */
export const systemClock: Clock = { now: () => Date.now() };
