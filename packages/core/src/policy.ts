/**
 * @module Policy every adapter shares (docs/storage.md, docs/events-and-webhooks.md): how long
 * things are kept and leased, and the checks of those settings. Adapters keep only mechanism.
 */

/** How long events and the deliveries log stay readable, in ms (14 days, `EVENT_RETENTION_DAYS`). */
export const DEFAULT_EVENT_RETENTION_MS = 14 * 24 * 60 * 60 * 1000;
/** How long a taken outbox batch is held by its taker before it is handed out again, in ms. */
export const DEFAULT_OUTBOX_LEASE_MS = 30_000;
/** How long a leased delivery job is held by one worker, in ms (longer than an attempt's 15 s deadline). */
export const DEFAULT_DELIVERY_LEASE_MS = 30_000;
/** How long a leased reply request is held without a renewal, in ms (the reply worker renews every 10 s). */
export const DEFAULT_REPLY_LEASE_MS = 30_000;

/**
 * `value` when it is a positive number of ms, `fallback` when it is `undefined`.
 * @throws RangeError naming `name` otherwise.
 */
export function positiveMs(value: number | undefined, fallback: number, name: string): number {
  const ms = value ?? fallback;
  if (!(ms > 0) || !Number.isFinite(ms)) throw new RangeError(`${name} must be a positive number of ms, got ${ms}`);
  return ms;
}

/**
 * `value` when it is a positive integer (of ms, or a count), `fallback` when it is `undefined`.
 * @throws RangeError naming `name` otherwise.
 */
export function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
  return n;
}

/**
 * Checks a queue's `lease(…, waitMs)` argument.
 * @throws RangeError for a `waitMs` that is not a number ≥ 0.
 */
export function checkWaitMs(waitMs: number): void {
  if (!(waitMs >= 0)) throw new RangeError(`waitMs must be a number of ms ≥ 0, got ${waitMs}`);
}
