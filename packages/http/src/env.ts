/** @module The Hono environment every Parley route and middleware shares. */
import type { Admission, Principal } from '@parley/core';

/**
 * Context variables: `principal` is set by the auth middleware for every authenticated request
 * (absent before it runs); `requestId` by the request-id middleware; `admission` by the rate-limit
 * middleware when the route's storage call decides the rate limit (middleware/rate-limit.ts).
 */
export interface ParleyEnv {
  Variables: {
    principal: Principal;
    requestId: string;
    admission?: Admission;
  };
}
