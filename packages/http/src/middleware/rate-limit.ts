/** @module Plan rate limits per workspace, announced with the IETF RateLimit header fields. */
import { ErrorCode, ParleyError, rateLimitRefusal, type Admission, type Core, type RateLimiter, type RateLimitResult } from '@parley/core';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { ParleyEnv } from '../env.js';
import { applyHeaderFields, setHeader } from '../response.js';

/** Route handlers that pass `c.var.admission` to every storage call they make (see {@link decidesAdmission}). */
const admitting = new WeakSet<object>();

/**
 * Marks `handler` as the first handler of a route that passes `c.var.admission` to the core
 * calls it makes, which decide it in their storage step (docs/rate-limits.md#one-round-trip).
 * Only such a route's requests skip the up-front decision; the route must not act before its
 * first storage call, other than with checks that throw (403, 400, …).
 */
export function decidesAdmission<H extends object>(handler: H): H {
  admitting.add(handler);
  return handler;
}

/**
 * Whether `c`'s storage call is to decide its rate limit: the route that will answer it (the first
 * matched handler that is not a `use()` middleware) is marked with {@link decidesAdmission}, and
 * the request has no `Idempotency-Key` — the idempotency step claims its key before the handler
 * runs, and must not keep a 429 as the key's answer.
 */
function decidedInStorage(c: Context): boolean {
  if (c.req.header('Idempotency-Key') !== undefined) return false;
  for (const route of matchedRoutes(c)) if (route.method !== 'ALL') return admitting.has(route.handler);
  return false;
}

/** Options of {@link rateLimit}. */
export interface RateLimitOptions {
  /**
   * The error code of a refusal decided by the `'closed'` failure policy (the store is down, so
   * no quota is known to be spent). Default `'service_unavailable'` (503): a 429 would tell the
   * client it exceeded a limit it has not.
   */
  failClosedCode?: typeof ErrorCode.serviceUnavailable | typeof ErrorCode.rateLimitExceeded;
}

/**
 * The header fields of one decision, following draft-ietf-httpapi-ratelimit-headers (structured
 * fields, RFC 9651), with the plan name as the policy name:
 * - `RateLimit-Policy: "<plan>";q=<limit>;w=<window in s>`
 * - `RateLimit: "<plan>";r=<remaining>;t=<s until the full quota is back, rounded up>`
 * - `Retry-After: <s until one more request is admitted, rounded up>` (RFC 9110), when refused.
 * Seconds are rounded up so a client that waits as told is never refused for being early.
 */
export function rateLimitHeaders(result: RateLimitResult): Array<[string, string]> {
  const name = `"${result.plan}"`;
  const headers: Array<[string, string]> = [
    ['RateLimit-Policy', `${name};q=${result.limit};w=${Math.ceil(result.periodMs / 1000)}`],
    ['RateLimit', `${name};r=${result.remaining};t=${Math.ceil(result.resetMs / 1000)}`],
  ];
  if (!result.allowed) headers.push(['Retry-After', String(Math.ceil(result.retryAfterMs / 1000))]);
  return headers;
}

/**
 * Hono middleware enforcing the plan limit of the authenticated workspace (docs/rate-limits.md, decisions
 * §7). Mount it right after the auth middleware: requests without `c.get('principal')` (the
 * 401s) pass through uncounted and without fields. Every other response it passes — handler
 * results, errors rendered by `onError`, 404s and its own refusal — carries `RateLimit-Policy` and
 * `RateLimit`. Over the limit it throws `ParleyError('rate_limit_exceeded')` with
 * `details.retryAfterSeconds`, for the app's `onError` to render as 429 (it also sets
 * `Retry-After` itself). A refusal costs no quota.
 *
 * Where the limiter `folds` (Redis) and the route {@link decidesAdmission}, the decision is not
 * made here but left to the route's first storage call as `c.var.admission`, which makes it in
 * the same atomic step (one round trip for both); a request that made no such call (it failed
 * before, e.g. with 400) is decided here afterwards and, when refused, answered 429 instead, so
 * the error precedence of docs/errors.md holds (docs/rate-limits.md#one-round-trip).
 *
 * `source` is a core (its limiter over the bundle's rate-limit store) or a {@link RateLimiter}.
 */
export function rateLimit(
  source: Pick<Core, 'rateLimiter'> | (Pick<RateLimiter, 'check'> & Partial<Pick<RateLimiter, 'folds' | 'admission'>>),
  options: RateLimitOptions = {},
): MiddlewareHandler<ParleyEnv> {
  const limiter = 'check' in source ? source : source.rateLimiter;
  // Only a limiter whose store decides inside storage calls hands admissions down.
  const admit = limiter.folds ? limiter.admission?.bind(limiter) : undefined;
  const failClosedCode = options.failClosedCode ?? ErrorCode.serviceUnavailable;
  const refusal = (result: RateLimitResult) =>
    result.failure === 'closed'
      ? new ParleyError(failClosedCode, 'Rate limits cannot be checked right now; retry shortly.', { retryAfterSeconds: Math.ceil(result.retryAfterMs / 1000) })
      : rateLimitRefusal(result);

  return async function rateLimit(c, next) {
    const principal = c.get('principal');
    if (!principal) return next();
    if (admit && decidedInStorage(c)) return decideInStorage(c, next, admit(principal));
    const result = await limiter.check(principal);
    // Before next(): the route's response, or the error handler's, is built with them.
    setHeaders(c, result);
    if (!result.allowed) {
      applyHeaderFields(c);
      throw refusal(result);
    }
    await next();
    // A response the route built itself (not with response.ts) gets them now.
    applyHeaderFields(c);
  };

  async function decideInStorage(c: Context<ParleyEnv>, next: () => Promise<void>, admission: Admission): Promise<void> {
    let announced = false;
    // Set as soon as the storage call decides, so the response (the route's, or onError's 429)
    // is built with them.
    admission.onDecided = (result) => {
      setHeaders(c, result);
      announced = true;
    };
    c.set('admission', admission);
    await next();
    if (!announced) {
      // No storage call decided (the request failed before its call, or made none): the store's
      // decision, asked now, or the failure policy's when the call that took it failed.
      const result = await admission.result();
      setHeaders(c, result);
      // Nothing was stored. Answer as the up-front check would have.
      if (!result.allowed) {
        applyHeaderFields(c);
        throw refusal(result);
      }
    }
    applyHeaderFields(c);
  }
}

function setHeaders(c: Context<ParleyEnv>, result: RateLimitResult): void {
  for (const [name, value] of rateLimitHeaders(result)) setHeader(c, name, value);
}
