/** @module Entity tags (RFC 9110 §8.8.3) of API resources, the `If-Match` check (§13.1.1) and `If-None-Match` (§13.1.2). */
import { hash } from 'node:crypto';
import { ErrorCode, ParleyError } from '../errors.js';

/** JSON with object keys sorted at every depth, so a tag does not depend on storage key order. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let json = '[';
    for (let i = 0; i < value.length; i += 1) json += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${json}]`;
  }
  let json = '{';
  for (const key of Object.keys(value).sort()) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    json += `${json.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(field)}`;
  }
  return `${json}}`;
}

/** Whether `value` and every object and array inside it are frozen, so its tag can never change. */
function deeplyFrozen(value: object): boolean {
  if (!Object.isFrozen(value)) return false;
  for (const field of Array.isArray(value) ? value : Object.values(value)) {
    if (field !== null && typeof field === 'object' && !deeplyFrozen(field)) return false;
  }
  return true;
}

/**
 * Tags of deep-frozen resources (records an in-process store hands out as stored, see
 * `frozenCopy`): the same record is tagged once however often it is read. Weak keys, so a
 * replaced record takes its tag with it.
 */
const frozenTags = new WeakMap<object, string>();

/**
 * The strong entity tag of a resource as the API returns it (README "Optimistic concurrency"):
 * `"` + the first 128 bits of the SHA-256 of its canonical JSON (keys sorted), base64url + `"`,
 * e.g. `"q1w2…"` (24 characters with the quotes). Any change to a returned field changes it;
 * fields the API does not return (a webhook secret) must be left out by the caller. A resource
 * whose objects and arrays are all frozen (plain data fields, no getters) is tagged once: its tag
 * is kept with it and served again.
 */
export function entityTag(resource: object): string {
  const cached = frozenTags.get(resource);
  if (cached !== undefined) return cached;
  const tag = `"${hash('sha256', canonicalJson(resource), 'base64url').slice(0, 22)}"`;
  if (deeplyFrozen(resource)) frozenTags.set(resource, tag);
  return tag;
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

/**
 * Whether a read's `If-None-Match` (RFC 9110 §13.1.2; `undefined` when absent) matches the
 * resource's current tag `etag`, so a `GET` may answer `304 Not Modified`: `*` matches any existing
 * resource, a list matches when one of its tags equals `etag` under the weak comparison (a `W/`
 * prefix is ignored). A malformed value matches nothing: the request is answered as if without it.
 */
export function ifNoneMatchMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const tags = listedTags(ifNoneMatch);
  if (tags === null) return false;
  return tags === '*' || tags.some((tag) => tag.replace(/^W\//, '') === etag.replace(/^W\//, ''));
}

/** Conditions of a conditional write: `ifMatch` is the request's `If-Match` value, if any. */
export interface WriteConditions {
  ifMatch?: string;
}
