/** @module A clock tests move by hand. */
import type { Clock } from '../ports/clock.js';

/** A {@link Clock} that only moves when told to. Times are ms since the epoch. */
export class ManualClock implements Clock {
  constructor(private time = Date.parse('2026-01-01T00:00:00.000Z')) {}

  now(): number {
    return this.time;
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.time += ms;
  }

  /** Sets the clock to `ms` since the epoch. */
  set(ms: number): void {
    this.time = ms;
  }
}
