/** @module The Hono environment every Parley route and middleware shares. */
import type { Principal } from '@parley/core';

/**
 * Context variables: `principal` is set by the auth middleware for every authenticated request
 * (absent before it runs); `requestId` by the request-id middleware.
 */
export interface ParleyEnv {
  Variables: {
    principal: Principal;
    requestId: string;
  };
}
