/** @module Plan rate limits per workspace, announced with the IETF RateLimit header fields. */
import {
  Admission,
  ErrorCode,
  ParleyError,
  rateLimitRefusal,
  type Core,
  type Principal,
  type RateLimiter,
  type RateLimitResult,
} from '@parley/core';
import type { Context, MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import { applyHeaderFields, setHeader } from '../response.js';

/**
 * Whether `c`'s rate limit may be left to the core: the request has no `Idempotency-Key` — the
 * idempotency step claims its key before the handler runs, and must not keep a 429 as the key's answer.
 */
function leavable(c: Context): boolean {
  return c.req.header('Idempotency-Key') === undefined;
}

/** Options of {@link rateLimit}. */
export interface RateLimitOptions {
  /**
   * The error code of a refusal decided by the `'closed'` failure policy (the store is down, so
   * no quota is known to be spent). Default `'service_unavailable'` (503): a 429 would tell the
   * client it exceeded a limit it has not.
   */
  failClosedCode?: typeof ErrorCode.serviceUnavailable | typeof ErrorCode.rateLimitExceeded;
  /**
   * Leave each decision to the core, in the request's `scope` (`c.var.scope`), when the limiter
   * `folds` (Redis): the core decides it before the first storage call or host-name lookup the
   * request makes, or that call decides it in its own atomic step (one round trip on Redis). Only
   * for routes that reach data and effects through core calls given `scope` (the `/api` routes,
   * built with `endpoint`). Default `false`: decided here, before the route runs.
   */
  leaveToCore?: boolean;
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
 * With `leaveToCore`, where the limiter `folds` (Redis), the decision is not made here but left
 * to the core as the pending decision in `c.var.scope`: the request's first storage call makes it
 * in the same atomic step (one round trip for both), and the core makes it before any other call.
 * After the route this reads the outcome from the scope: a request that made no such call (it
 * failed before, e.g. with 400) is decided now and, when refused, answered 429 instead, so the
 * error precedence of docs/errors.md holds (docs/rate-limits.md#one-round-trip).
 *
 * `source` is a core (its limiter over the bundle's rate-limit store) or a {@link RateLimiter}.
 */
export function rateLimit(
  source: Pick<Core, 'rateLimiter'> | (Pick<RateLimiter, 'check'> & Partial<RateLimiter>),
  options: RateLimitOptions = {},
): MiddlewareHandler<ParleyEnv> {
  const limiter = 'check' in source ? source : source.rateLimiter;
  // Only a limiter whose store decides inside storage calls hands its decisions down.
  const admit =
    options.leaveToCore && limiter.folds && 'hitOf' in limiter
      ? (principal: Principal) => new Admission(limiter as RateLimiter, principal)
      : undefined;
  const failClosedCode = options.failClosedCode ?? ErrorCode.serviceUnavailable;
  const refusal = (result: RateLimitResult) =>
    result.failure === 'closed'
      ? new ParleyError(failClosedCode, 'Rate limits cannot be checked right now; retry shortly.', {
          retryAfterSeconds: Math.ceil(result.retryAfterMs / 1000),
        })
      : rateLimitRefusal(result);

  return async function rateLimit(c, next) {
    const principal = c.get('principal');
    if (!principal) return next();
    if (admit && leavable(c)) return leaveToCore(c, next, admit(principal));
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

  async function leaveToCore(c: Context<ParleyEnv>, next: () => Promise<void>, admission: Admission): Promise<void> {
    c.set('scope', { workspaceId: c.get('principal').workspaceId, admission });
    await next();
    // The decision a storage call made, the failure policy's when that call failed, or — when the
    // request made no call — the store's, asked now. Set after the response was built: copied onto it.
    const result = await admission.result();
    setHeaders(c, result);
    // Refused in storage, the route threw it and onError answered 429. Otherwise nothing was
    // stored: answer as the up-front check would have.
    if (!result.allowed && !admission.decidedInStorage) {
      applyHeaderFields(c);
      throw refusal(result);
    }
    applyHeaderFields(c);
  }
}

function setHeaders(c: Context<ParleyEnv>, result: RateLimitResult): void {
  for (const [name, value] of rateLimitHeaders(result)) setHeader(c, name, value);
}
