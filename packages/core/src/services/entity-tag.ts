/** @module Entity tags (RFC 9110 §8.8.3) of API resources and the `If-Match` check (§13.1.1). */
import { createHash } from 'node:crypto';
import { ErrorCode, ParleyError } from '../errors.js';

/** JSON with object keys sorted at every depth, so a tag does not depend on storage key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The strong entity tag of a resource as the API returns it (README "Optimistic concurrency"):
 * `"` + the first 128 bits of the SHA-256 of its canonical JSON (keys sorted), base64url + `"`,
 * e.g. `"q1w2…"` (24 characters with the quotes). Any change to a returned field changes it;
 * fields the API does not return (a webhook secret) must be left out by the caller.
 */
export function entityTag(resource: object): string {
  return `"${createHash('sha256').update(canonicalJson(resource)).digest('base64url').slice(0, 22)}"`;
}

/**
 * The entity tags listed in an `If-Match` field value (RFC 9110 §13.1.1): `*`, or a comma-separated
 * list of entity tags. Weak tags (`W/"…"`) are kept with their prefix: they never match, since
 * `If-Match` uses the strong comparison. `null` when the value is not of that grammar.
 */
function listedTags(ifMatch: string): string[] | '*' | null {
  const value = ifMatch.trim();
  if (value === '*') return '*';
  const tags = value.match(/(?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*"/g) ?? [];
  // Anything besides tags, commas and whitespace is malformed.
  if (tags.length === 0 || value.replace(/(?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*"/g, '').replace(/[\s,]/g, '') !== '') return null;
  return tags;
}

/**
 * Throws unless `ifMatch` (the request's `If-Match` value; `undefined` when absent, which always
 * passes) matches the current resource: `*` matches any existing one, a list matches when one of
 * its strong tags equals `entityTag(current)`. Meant to run inside a storage compare-and-set
 * (ports/storage.ts `Update`), so the check and the write see the same record.
 * @throws ParleyError `precondition_failed` (412) on a mismatch, `details.etag` the current tag;
 *   `invalid_request` when the value is not an `If-Match` field value.
 */
export function checkIfMatch(ifMatch: string | undefined, current: object): void {
  if (ifMatch === undefined) return;
  const tags = listedTags(ifMatch);
  if (tags === null) throw new ParleyError(ErrorCode.invalidRequest, 'If-Match must be * or a list of quoted entity tags.');
  if (tags === '*') return;
  const etag = entityTag(current);
  if (!tags.includes(etag)) {
    throw new ParleyError(ErrorCode.preconditionFailed, 'The resource was changed since the If-Match entity tag was read.', { etag });
  }
}

/** Conditions of a conditional write: `ifMatch` is the request's `If-Match` value, if any. */
export interface WriteConditions {
  ifMatch?: string;
}
