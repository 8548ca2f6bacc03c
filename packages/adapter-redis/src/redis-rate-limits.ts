/** @module Rate-limit state on Redis: one GCRA TAT per key, decided by one Lua script. */
import {
  emissionIntervalMs,
  type RateLimitDecision,
  type RateLimitRule,
  type RateLimitStore,
} from '@parley/core/adapter';
import { RedisAdapter } from './connection.js';
import { rateLimitKey } from './keys.js';
import { GCRA_HIT } from './redis-rate-limits.lua.js';

/**
 * {@link RateLimitStore} on Redis: `hit` is one Lua script — one round trip, atomic across every
 * process sharing the server — giving exactly the decisions of core's `gcra()`. State is one
 * STRING per key (`<prefix>{<key>}:rl`, in the workspace's slot) that expires once its quota is
 * full again, so memory is O(keys hit within the last period).
 *
 * A `RedisStorage` on the same client and prefix given this store (`redisAdapters` does) decides
 * its hits inside the script of the call a request makes, on this same key (script.ts), so most
 * requests cost no round trip of their own for their rate limit (docs/rate-limits.md#one-round-trip).
 *
 * Time is the caller's `nowMs`, never the Redis server clock, so every instance must keep its
 * clock in sync (NTP) for their decisions to agree. A hit is decided at the later of its `nowMs`
 * and the latest `nowMs` the key admitted a hit at, so a hit stamped a moment before another
 * that reached Redis first counts down from where that one left off. Options as for `RedisStorage`.
 */
export class RedisRateLimitStore extends RedisAdapter implements RateLimitStore {
  /**
   * Counts one request at `nowMs` (integer ms since the epoch) against `rule` for `key`.
   * @throws RangeError for an invalid rule or a non-integer `nowMs` (as `gcra()` does), before
   *   touching Redis; ParleyError `service_unavailable` when Redis cannot be reached.
   */
  async hit(key: string, rule: RateLimitRule, nowMs: number): Promise<RateLimitDecision> {
    const interval = emissionIntervalMs(rule);
    if (!Number.isSafeInteger(nowMs)) throw new RangeError(`nowMs must be an integer number of ms, got ${nowMs}`);
    const reply = await this.runner.script(GCRA_HIT, {
      keys: { state: rateLimitKey(this.runner.prefix, key) },
      args: { nowMs, intervalMs: interval, limit: rule.limit },
    });
    const [allowed, remaining, resetMs, retryAfterMs] = (reply as number[]).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    return { allowed: allowed === 1, limit: rule.limit, remaining, resetMs, retryAfterMs };
  }
}
