/** @module `/key`: what the calling API key grants (docs/authentication.md), for consoles and scripts. */
import { CallingKeySchema } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { endpoints } from './endpoint.js';
import { json } from '../response.js';

/** The calling key's route, to be mounted at `/api/key` behind authentication (no scope needed). */
export function keyRoutes(): Hono<ParleyEnv> {
  const endpoint = endpoints();
  return new Hono<ParleyEnv>().get(
    '/',
    ...endpoint(
      {
        operationId: 'getCallingKey',
        summary: 'Describe the calling key',
        description:
          "The workspace, plan and scopes of the key the request is made with, and its own hourly limit if it has one. Any valid key may ask; the key itself is never returned. The rate-limit header fields say how much of the limit is left. The console reads it on sign-in to show which actions the key's scopes allow.",
        tag: 'Operations',
        anyKey: true,
        success: { status: 200, description: 'What the key grants.', schema: CallingKeySchema },
      },
      (_input, c) => {
        const principal = c.get('principal');
        return json(c, {
          keyId: principal.keyId,
          workspaceId: principal.workspaceId,
          plan: principal.plan,
          scopes: [...principal.scopes],
          limitPerHour: principal.limitPerHour ?? null,
        });
      },
    ),
  );
}
