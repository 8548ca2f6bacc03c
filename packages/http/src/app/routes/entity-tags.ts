/** @module `ETag` and `If-None-Match` on single-resource responses, `If-Match` on writes (docs/optimistic-concurrency.md). */
import { entityTag, ifNoneMatchMatches, type WriteConditions } from '@parley/core';
import type { Context } from 'hono';
import type { ParleyEnv } from '../env.js';
import { json, respond, setHeader } from '../response.js';

/**
 * Answers 200 with `resource` as JSON and its strong `ETag` (RFC 9110 §8.8.3); a `GET` whose
 * `If-None-Match` matches that tag answers `304 Not Modified` with the `ETag` and no body
 * (§13.1.2, §15.4.5), so a client revalidating its copy downloads nothing.
 */
export function jsonWithEntityTag(c: Context<ParleyEnv>, resource: object): Response {
  const etag = entityTag(resource);
  setHeader(c, 'ETag', etag);
  if ((c.req.method === 'GET' || c.req.method === 'HEAD') && ifNoneMatchMatches(c.req.header('If-None-Match'), etag))
    return respond(c, null, 304);
  return json(c, resource);
}

/** The request's write conditions: `If-Match` when sent (repeated fields joined by commas, RFC 9110 §5.3). */
export function writeConditions(c: Context<ParleyEnv>): WriteConditions {
  const ifMatch = c.req.header('If-Match');
  return ifMatch === undefined ? {} : { ifMatch };
}
