/** @module Bearer API key authentication (RFC 6750) against core's API keys. */
import { ErrorCode, ParleyError, apiKeyChecksumFails, type Principal } from '@parley/core';
import type { Context, MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import { setHeader } from '../response.js';

/** RFC 6750 §2.1 `b64token`. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** RFC 7235 §2.1: the scheme is case-insensitive and followed by one or more spaces. */
const BEARER = /^Bearer +(\S+)$/i;

/** The `WWW-Authenticate` challenge of every 401 (RFC 6750 §3), before any `error=` parameter. */
export const BEARER_CHALLENGE = 'Bearer realm="parley"';

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions {
  /** Resolves a raw key to its principal, `null` when unknown (`core.apiKeys`). */
  apiKeys: { authenticate(key: string): Promise<Principal | null> };
}

/**
 * Requires `Authorization: Bearer <key>` and sets `c.var.principal` to the key's principal.
 * Missing, malformed or unknown keys, and generated keys whose checksum fails (refused before
 * any lookup, so a typo never costs a store round trip), are 401 `unauthorized` with a `WWW-Authenticate: Bearer`
 * challenge (RFC 6750 §3; a malformed header would be 400 there, but docs/errors.md answers every
 * credential failure with 401, and `error=` only appears when credentials were sent).
 *
 * A key store that cannot answer (Redis down) rejects with `service_unavailable`, which passes
 * through to the error handler as 503: an outage must never look like a bad key (401).
 *
 * Written here rather than with `hono/bearer-auth`, which answers malformed headers with 400 and
 * renders its own bodies instead of throwing Parley's error family.
 */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<ParleyEnv> {
  const authenticate = bearerAuthentication(options);
  return async function bearerAuth(c, next) {
    await authenticate(c);
    await next();
  };
}

/**
 * {@link bearerAuth}'s check as a step for a middleware of its own (the app's guard runs it and
 * then the rate limit, one middleware instead of two): sets `c.var.principal` or throws.
 * @throws ParleyError `unauthorized` (401, with its challenge), `service_unavailable` (503)
 */
export function bearerAuthentication(options: BearerAuthOptions): (c: Context<ParleyEnv>) => Promise<void> {
  const reject = (c: Context<ParleyEnv>, message: string, error?: 'invalid_request' | 'invalid_token'): never => {
    setHeader(c, 'WWW-Authenticate', `${BEARER_CHALLENGE}${error ? `, error="${error}"` : ''}`);
    throw new ParleyError(ErrorCode.unauthorized, message);
  };
  return async function authenticate(c) {
    const header = c.req.header('Authorization');
    if (!header) return reject(c, 'Missing API key. Send it as Authorization: Bearer <key>.');
    const token = BEARER.exec(header)?.[1];
    if (!token || !B64TOKEN.test(token)) {
      return reject(c, 'Malformed Authorization header. Expected Authorization: Bearer <key>.', 'invalid_request');
    }
    // Core refuses these too; checked here as well to say why, and without any lookup.
    if (apiKeyChecksumFails(token))
      return reject(c, 'Invalid API key: its checksum does not match. Check it for a typo.', 'invalid_token');
    const principal = await options.apiKeys.authenticate(token);
    if (!principal) return reject(c, 'Unknown API key.', 'invalid_token');
    c.set('principal', principal);
  };
}
