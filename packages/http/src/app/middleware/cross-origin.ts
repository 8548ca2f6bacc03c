/** @module CORS for browser callers on other origins (Hono's `cors` middleware, the Fetch standard's CORS protocol). */
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { ParleyEnv } from '../env.js';

/**
 * Response headers a page on another origin may read besides the CORS-safelisted ones: the
 * request id, the IETF RateLimit fields, `Retry-After`, the 401 challenge and the 405 `Allow`.
 */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'WWW-Authenticate',
  'Allow',
] as const;

/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for `origins` (`'*'`, or exact origins such as `https://app.example.com`). Registered
 * before authentication: a preflight (`OPTIONS` with `Access-Control-Request-Method`) carries
 * no `Authorization` header by design, so it is answered `204` here, without a key and without
 * counting against a quota. Actual requests still need their key; their responses, errors
 * included, carry `Access-Control-Allow-Origin` when the origin is allowed. Requests from other
 * origins get no CORS headers, so the browser withholds the response from the page. Keys travel
 * in `Authorization`, not cookies, so credentials mode is not enabled.
 */
export function crossOrigin(origins: '*' | readonly string[]): MiddlewareHandler<ParleyEnv> {
  return cors({
    origin: origins === '*' ? '*' : [...origins],
    allowMethods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
    exposeHeaders: [...EXPOSED_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  });
}
