/** @module When a failed delivery attempt is tried again (README "Receiving webhooks", retry schedule). */

/**
 * The Standard Webhooks schedule, in seconds between attempts: ten attempts over about 75 h
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h).
 */
export const DEFAULT_WEBHOOK_RETRY_DELAYS: readonly number[] = Object.freeze([
  5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
]);

/** Largest share a delay is moved by, either way, so retries of many events do not arrive together. */
export const RETRY_JITTER = 0.1;

/** Longest wait a `Retry-After` can impose, in ms (24 h). */
export const MAX_RETRY_AFTER_WAIT_MS = 24 * 60 * 60 * 1000;

/** How long an endpoint may fail every attempt before Parley disables it (`disabledReason: "failing"`), in ms. */
export const FAILING_DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

/**
 * How long to wait, in ms, before the attempt after `failedAttempt` (1-based), or `null` when it
 * was the last (attempts = 1 + `delaysSeconds.length`). The scheduled delay is moved by up to
 * ±10 % (`random()` in [0, 1)); a receiver's `Retry-After` (`retryAfterMs`) wins when it is
 * later, capped at 24 h.
 */
export function retryDelayMs(
  delaysSeconds: readonly number[],
  failedAttempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const base = delaysSeconds[failedAttempt - 1];
  if (base === undefined) return null;
  const jittered = base * 1000 * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random());
  const asked = retryAfterMs === null ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_WAIT_MS);
  return Math.round(Math.max(jittered, asked));
}

/**
 * Checks a retry schedule: finite, non-negative seconds (fractions allowed, for tests and local
 * development), each at most 24 h.
 * @throws RangeError naming the first bad entry
 */
export function checkRetryDelays(delaysSeconds: readonly number[]): void {
  delaysSeconds.forEach((delay, index) => {
    if (!Number.isFinite(delay) || delay < 0 || delay > 86_400)
      throw new RangeError(`webhookRetryDelays[${index}]: expected seconds from 0 to 86400.`);
  });
}

/** Delivery settings of a core (`TOKENS.deliveryOptions`). */
export interface DeliveryOptions {
  /** Seconds between attempts (`CoreSettings.webhookRetryDelays`). */
  retryDelaysSeconds: readonly number[];
}
