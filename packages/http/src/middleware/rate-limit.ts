/** @module Plan rate limits per workspace, announced with the IETF RateLimit header fields. */
import { ErrorCode, ParleyError, type Core, type RateLimiter, type RateLimitResult } from '@parley/core';
import type { Context, MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';

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
 * `source` is a core (its limiter over the bundle's rate-limit store) or a {@link RateLimiter}.
 */
export function rateLimit(
  source: Pick<Core, 'rateLimiter'> | Pick<RateLimiter, 'check'>,
  options: RateLimitOptions = {},
): MiddlewareHandler<ParleyEnv> {
  const limiter = 'check' in source ? source : source.rateLimiter;
  const failClosedCode = options.failClosedCode ?? ErrorCode.serviceUnavailable;

  return async function rateLimit(c, next) {
    const principal = c.get('principal');
    if (!principal) return next();
    const result = await limiter.check(principal);
    const headers = rateLimitHeaders(result);
    // Before next(): responses built from the context (c.json, onError's c.json) start with them.
    for (const [name, value] of headers) c.header(name, value);

    if (!result.allowed) {
      // Materialise c.res now: Hono copies its headers onto whatever Response onError returns,
      // even one built with `new Response()` rather than from the context.
      void c.res;
      const retryAfterSeconds = Math.ceil(result.retryAfterMs / 1000);
      if (result.failure === 'closed') {
        throw new ParleyError(failClosedCode, 'Rate limits cannot be checked right now; retry shortly.', { retryAfterSeconds });
      }
      throw new ParleyError(ErrorCode.rateLimitExceeded, overLimitMessage(result, retryAfterSeconds), { retryAfterSeconds });
    }

    await next();
    // After next(): a handler may have returned its own Response, which Hono does not merge
    // with headers set before it existed. Responses built from the context have them already.
    if (!c.res.headers.has('RateLimit')) setResponseHeaders(c, headers);
  };
}

function overLimitMessage(result: RateLimitResult, retryAfterSeconds: number): string {
  const window = result.periodMs === 3_600_000 ? 'hour' : `${Math.ceil(result.periodMs / 1000)} seconds`;
  return `Rate limit exceeded: the ${result.plan} plan allows ${result.limit} requests per ${window}. Retry after ${retryAfterSeconds} s.`;
}

function setResponseHeaders(c: Context<ParleyEnv>, headers: Array<[string, string]>): void {
  try {
    for (const [name, value] of headers) c.res.headers.set(name, value);
  } catch {
    // Immutable headers (a Response straight from fetch()): replace it with a mutable copy.
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of headers) c.res.headers.set(name, value);
  }
}
