/** @module Rate-limit state in this process's memory: one GCRA TAT per key, decided synchronously. */
import { gcra, type RateLimitDecision, type RateLimitRule, type RateLimitStore } from '@parley/core/adapter';

/** Options of a {@link MemoryRateLimitStore}. */
export interface MemoryRateLimitStoreOptions {
  /** Fewest hits between sweeps of expired keys (more when more keys are held). Default 1 000. */
  sweepEvery?: number;
}

/**
 * {@link RateLimitStore} in memory: a `Map` from key to its TAT and the latest `nowMs` it admitted
 * a hit at (ms since the epoch). Each `hit` reads, decides and writes without awaiting anything,
 * so it runs within one turn of the event loop and is atomic against every other caller in this
 * process — and only this process: use the Redis store when several instances share one quota.
 * A hit is decided at the later of its `nowMs` and that latest one, so a request stamped a moment
 * before another that reached the store first counts down from where that one left off
 * (docs/rate-limits.md).
 *
 * A TAT at or before `nowMs` carries no debt (GCRA treats it exactly like a missing key), so such
 * entries are swept every `max(sweepEvery, size)` hits and memory stays proportional to the keys
 * hit within the last period. Sweeps use the `nowMs` callers pass, never the wall clock.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly states = new Map<string, { tat: number; seenMs: number }>();
  private readonly sweepEvery: number;
  private hitsSinceSweep = 0;
  /** Decided in a synchronous section of this process: no deadline is needed. */
  readonly inProcess = true;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.sweepEvery = options.sweepEvery ?? 1000;
    if (!Number.isSafeInteger(this.sweepEvery) || this.sweepEvery < 1) {
      throw new RangeError(`sweepEvery must be an integer ≥ 1, got ${options.sweepEvery}`);
    }
  }

  async hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    // Nothing below awaits: the read-decide-write is one synchronous section.
    // Sweeping once per `size` hits keeps the cost O(1) per hit, amortized, however many keys.
    if (++this.hitsSinceSweep >= Math.max(this.sweepEvery, this.states.size)) this.sweep(nowMs);
    const state = this.states.get(key);
    const at = state === undefined ? nowMs : Math.max(nowMs, state.seenMs);
    const { decision, tat } = gcra(state?.tat ?? null, rule, at);
    if (tat === null) return decision;
    if (state === undefined) {
      this.states.set(key, { tat, seenMs: at });
    } else {
      state.tat = tat;
      state.seenMs = at;
    }
    return decision;
  }

  /** Keys that currently hold state (for tests and metrics). */
  get size(): number {
    return this.states.size;
  }

  /** Drops every key whose TAT is at or before `nowMs` (ms since the epoch). */
  sweep(nowMs: number): void {
    this.hitsSinceSweep = 0;
    for (const [key, state] of this.states) {
      if (state.tat <= nowMs) this.states.delete(key);
    }
  }
}
