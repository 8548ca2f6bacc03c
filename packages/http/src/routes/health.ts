/** @module `/healthz` and `/readyz`: probes for orchestrators, without authentication (decisions §10). */
import { ErrorCode, ParleyError, type Core } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';

/** How long `/readyz` waits for `storage.ping()`: probes must answer before their own timeout. */
export const READINESS_TIMEOUT_MS = 2_000;

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`storage ping took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `GET /healthz`: 200 `{status: "ok"}` while the process serves requests.
 * `GET /readyz`: 200 `{status: "ok"}` when storage answers a ping within
 * {@link READINESS_TIMEOUT_MS}; otherwise 503 `service_unavailable` (the cause is logged).
 */
export function healthRoutes(core: Pick<Core, 'storage'>): Hono<ParleyEnv> {
  return new Hono<ParleyEnv>()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/readyz', async (c) => {
      try {
        await withTimeout(core.storage.ping(), READINESS_TIMEOUT_MS);
      } catch (cause) {
        throw new ParleyError(ErrorCode.serviceUnavailable, 'Storage is unreachable.', undefined, { cause });
      }
      return c.json({ status: 'ok' });
    });
}
