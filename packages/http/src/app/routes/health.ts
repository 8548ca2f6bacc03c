/** @module `/healthz` and `/readyz`: probes for orchestrators, without authentication (docs/operations.md). */
import { ErrorCode, HealthSchema, ParleyError, type Core } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { documentAndRequireScope } from '../openapi/operation.js';
import { answerWrongMethods } from './fallback.js';

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
 * Other methods on either path are 405 `method_not_allowed`.
 */
export function healthRoutes(core: Pick<Core, 'storage'>): Hono<ParleyEnv> {
  const routes = new Hono<ParleyEnv>()
    .get(
      '/healthz',
      documentAndRequireScope({
        operationId: 'getHealth',
        summary: 'Liveness probe',
        tag: 'Operations',
        success: { status: 200, description: 'The process serves requests.', schema: HealthSchema },
      }),
      (c) => c.json({ status: 'ok' }),
    )
    .get(
      '/readyz',
      documentAndRequireScope({
        operationId: 'getReadiness',
        summary: 'Readiness probe',
        description: `Storage answered a ping within ${READINESS_TIMEOUT_MS} ms.`,
        tag: 'Operations',
        success: { status: 200, description: 'Storage is reachable.', schema: HealthSchema },
        errors: { 503: '`service_unavailable`: storage did not answer in time (the cause is logged).' },
      }),
      async (c) => {
        try {
          await withTimeout(core.storage.ping(), READINESS_TIMEOUT_MS);
        } catch (cause) {
          throw new ParleyError(ErrorCode.serviceUnavailable, 'Storage is unreachable.', undefined, { cause });
        }
        return c.json({ status: 'ok' });
      },
    );
  return answerWrongMethods(routes);
}
