/** @module `ETag` on single-resource responses and `If-Match` on writes (README "Optimistic concurrency"). */
import { entityTag, type WriteConditions } from '@parley/core';
import type { Context } from 'hono';
import type { ParleyEnv } from '../env.js';

/** Answers 200 with `resource` as JSON and its strong `ETag` (RFC 9110 §8.8.3). */
export function jsonWithEntityTag(c: Context<ParleyEnv>, resource: object): Response {
  c.header('ETag', entityTag(resource));
  return c.json(resource);
}

/** The request's write conditions: `If-Match` when sent (repeated fields joined by commas, RFC 9110 §5.3). */
export function writeConditions(c: Context<ParleyEnv>): WriteConditions {
  const ifMatch = c.req.header('If-Match');
  return ifMatch === undefined ? {} : { ifMatch };
}
