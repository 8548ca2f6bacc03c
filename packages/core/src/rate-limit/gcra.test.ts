/** @module Tests of gcra(): exact boundaries, rounding, and the documented rolling-window bound. */
import { describe, expect, it } from 'vitest';
import { emissionIntervalMs, gcra } from './gcra.js';

const SMALL = { limit: 5, periodMs: 60_000 }; // T = 12 000 ms, τ = 48 000 ms

/** Runs `times` hits through gcra() like a store would, returning each decision's `allowed`. */
function run(rule: typeof SMALL, times: number[]): boolean[] {
  let state: number | null = null;
  return times.map((now) => {
    const { decision, tat } = gcra(state, rule, now);
    if (tat !== null) state = tat;
    return decision.allowed;
  });
}

describe('emissionIntervalMs', () => {
  it('is periodMs / limit, rounded up to a whole ms', () => {
    expect(emissionIntervalMs({ limit: 100, periodMs: 3_600_000 })).toBe(36_000);
    expect(emissionIntervalMs({ limit: 1000, periodMs: 3_600_000 })).toBe(3_600);
    expect(emissionIntervalMs({ limit: 7, periodMs: 60_000 })).toBe(8_572);
    expect(emissionIntervalMs({ limit: 7000, periodMs: 3_600_000 })).toBe(515);
    expect(emissionIntervalMs({ limit: 1000, periodMs: 1000 })).toBe(1);
  });

  it('refuses rules that are not integers with 1 ≤ limit ≤ periodMs', () => {
    for (const rule of [
      { limit: 0, periodMs: 1000 },
      { limit: 1.5, periodMs: 1000 },
      { limit: 1001, periodMs: 1000 },
      { limit: 10, periodMs: Number.NaN },
      { limit: 10, periodMs: 1000.5 },
    ]) {
      expect(() => emissionIntervalMs(rule)).toThrow(RangeError);
    }
  });
});

describe('gcra', () => {
  it('admits a new key with limit − 1 remaining and one interval to reset', () => {
    expect(gcra(null, SMALL, 1_000)).toEqual({
      decision: { allowed: true, limit: 5, remaining: 4, resetMs: 12_000, retryAfterMs: 0 },
      tat: 13_000,
    });
  });

  it('treats a TAT in the past exactly like no state', () => {
    expect(gcra(500, SMALL, 1_000)).toEqual(gcra(null, SMALL, 1_000));
    expect(gcra(1_000, SMALL, 1_000)).toEqual(gcra(null, SMALL, 1_000));
  });

  it('admits at the burst tolerance and refuses 1 ms over it, recording nothing', () => {
    // TAT − now = τ = 48 000: admitted, and that was the last one.
    expect(gcra(49_000, SMALL, 1_000)).toEqual({
      decision: { allowed: true, limit: 5, remaining: 0, resetMs: 60_000, retryAfterMs: 0 },
      tat: 61_000,
    });
    // TAT − now = τ + 1: refused, retry in 1 ms, full in 48 001 ms.
    expect(gcra(49_001, SMALL, 1_000)).toEqual({
      decision: { allowed: false, limit: 5, remaining: 0, resetMs: 48_001, retryAfterMs: 1 },
      tat: null,
    });
  });

  it('counts remaining by whole intervals of headroom', () => {
    // After this hit TAT − now = 36 001: 23 999 ms of headroom is one whole interval.
    expect(gcra(25_001, SMALL, 1_000).decision).toMatchObject({ remaining: 1, resetMs: 36_001 });
    expect(gcra(25_000, SMALL, 1_000).decision).toMatchObject({ remaining: 2, resetMs: 36_000 });
  });

  it('admits exactly limit at one instant, also when T is rounded up', () => {
    expect(run(SMALL, Array(7).fill(0))).toEqual([true, true, true, true, true, false, false]);
    const odd = { limit: 7, periodMs: 60_000 };
    expect(run(odd, Array(8).fill(0)).filter(Boolean).length).toBe(7);
    // Rounded up: the full quota is back after 7 · 8 572 = 60 004 ms, never sooner.
    let state: number | null = null;
    for (let i = 0; i < 7; i++) state = gcra(state, odd, 0).tat;
    expect(state).toBe(60_004);
  });

  it('admits at most 2·limit − 1 in any rolling period, and limit per period in the long run', () => {
    // A client retrying every millisecond for ten periods gets every request GCRA can admit.
    const times = Array.from({ length: 600_000 }, (_, ms) => ms);
    const allowed = run(SMALL, times);
    const admittedAt = times.filter((_, i) => allowed[i]);
    let most = 0;
    for (let first = 0, last = 0; last < admittedAt.length; last++) {
      while (admittedAt[last]! - admittedAt[first]! >= SMALL.periodMs) first++;
      most = Math.max(most, last - first + 1);
    }
    expect(most).toBe(2 * SMALL.limit - 1);
    // The burst of 5 at 0, then one per 12 000 ms: 12 000, 24 000, …, 588 000.
    expect(admittedAt.length).toBe(5 + 49);
  });

  it('lets a stored TAT from another rule carry over as debt in ms', () => {
    // 5 hits of Free (100/h, T = 36 s) leave 180 000 ms of debt; under SMALL τ is 48 000 ms.
    expect(gcra(180_000, SMALL, 0).decision).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 180_000,
      retryAfterMs: 132_000,
    });
  });

  it('refuses times and states that are not whole milliseconds', () => {
    expect(() => gcra(null, SMALL, 1.5)).toThrow(RangeError);
    expect(() => gcra(10.25, SMALL, 1)).toThrow(RangeError);
    expect(() => gcra(null, SMALL, Number.NaN)).toThrow(RangeError);
  });
});
