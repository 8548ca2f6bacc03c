/** @module Entity tags (RFC 9110 §8.8.3) of API resources, `If-Match` (§13.1.1) decided on record versions, and `If-None-Match` (§13.1.2). */
import { hash } from 'node:crypto';
import { ErrorCode, ParleyError } from '../errors.js';
import { recordVersion } from '../record-version.js';

/** Bytes of the tag taken from the id's digest alone; the other 6 carry the version. */
const ID_BYTES = 10;
const TAG_BYTES = 16;

function idDigest(id: string): Buffer {
  return hash('sha256', id, 'buffer');
}

/**
 * The strong entity tag of a stored resource as the API returns it (docs/api.md "Conditional
 * writes"): derived from its `id` and its internal version (`recordVersion`, ports/storage.ts
 * "Versions"), which every write that changes a returned field bumps — so any change to a returned
 * field changes the tag, and so does a write that rewrites a field with its own value. `"` + 22
 * base64url characters + `"` (24 with the quotes): 16 bytes, the first 10 of the SHA-256 of the
 * id, then the version (48-bit big-endian) XOR the next 6. Stores decide If-Match on the version,
 * inside their atomic step; {@link ifMatchVersions} reads it back from a tag.
 */
export function entityTag(resource: { id: string } | object): string {
  // A frozen record's id and version cannot change (the version is a read-only property): its
  // tag is computed once. In-process stores hand out the same frozen record on every read.
  const frozen = Object.isFrozen(resource);
  const known = frozen ? tags.get(resource) : undefined;
  if (known !== undefined) return known;
  const tag = computedTag(resource);
  if (frozen) tags.set(resource, tag);
  return tag;
}

/** Tags of frozen records, computed once each. */
const tags = new WeakMap<object, string>();

function computedTag(resource: object): string {
  const id = (resource as { id?: unknown }).id;
  const digest = idDigest(typeof id === 'string' ? id : '');
  const tag = Buffer.alloc(TAG_BYTES);
  digest.copy(tag, 0, 0, ID_BYTES);
  tag.writeUIntBE(recordVersion(resource), ID_BYTES, TAG_BYTES - ID_BYTES);
  for (let i = ID_BYTES; i < TAG_BYTES; i += 1) tag[i]! ^= digest[i]!;
  return `"${tag.toString('base64url')}"`;
}

/** The version a strong tag of resource `id` stands for, or `null` when it is not one of its tags. */
function versionOf(tag: string, id: string): number | null {
  if (!/^"[A-Za-z0-9_-]{22}"$/.test(tag)) return null;
  const bytes = Buffer.from(tag.slice(1, -1), 'base64url');
  // A tag we issued re-encodes to itself; anything else (e.g. other trailing bits) is not one.
  if (bytes.length !== TAG_BYTES || `"${bytes.toString('base64url')}"` !== tag) return null;
  const digest = idDigest(id);
  if (!bytes.subarray(0, ID_BYTES).equals(digest.subarray(0, ID_BYTES))) return null;
  for (let i = ID_BYTES; i < TAG_BYTES; i += 1) bytes[i]! ^= digest[i]!;
  return bytes.readUIntBE(ID_BYTES, TAG_BYTES - ID_BYTES);
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
  if (tags.length === 0 || value.replace(/(?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*"/g, '').replace(/[\s,]/g, '') !== '')
    return null;
  return tags;
}

/**
 * What `ifMatch` (the request's `If-Match` value) requires of resource `id`, as a store's
 * `ifVersion` precondition: `undefined` (no condition) when absent or `*` (any existing resource),
 * else the versions its strong tags stand for — an empty list (never met) when none is a tag of
 * this resource.
 * @throws ParleyError `invalid_request` when the value is not an `If-Match` field value.
 */
export function ifMatchVersions(ifMatch: string | undefined, id: string): number[] | undefined {
  if (ifMatch === undefined) return undefined;
  const tags = listedTags(ifMatch);
  if (tags === null)
    throw new ParleyError(ErrorCode.invalidRequest, 'If-Match must be * or a list of quoted entity tags.');
  if (tags === '*') return undefined;
  return tags.map((tag) => versionOf(tag, id)).filter((version): version is number => version !== null);
}

/** Whether `current`'s version meets `ifVersion` (see {@link ifMatchVersions}). */
export function versionMatches(ifVersion: readonly number[] | undefined, current: object): boolean {
  return ifVersion === undefined || ifVersion.includes(recordVersion(current));
}

/** The 412 of an `If-Match` that does not match `current` (`details.etag` its current tag). */
export function preconditionFailed(current: object): ParleyError {
  return new ParleyError(
    ErrorCode.preconditionFailed,
    'The resource was changed since the If-Match entity tag was read.',
    { etag: entityTag(current) },
  );
}

/**
 * Throws unless `ifMatch` (`undefined` when absent, which always passes) matches `current`, a
 * stored resource with `id` (its version attached): `*` matches any, a list matches when one of
 * its strong tags is `entityTag(current)`. For a read; a write passes {@link ifMatchVersions} to
 * its store, which decides in the write's atomic step.
 * @throws ParleyError `precondition_failed` (412) on a mismatch, `details.etag` the current tag;
 *   `invalid_request` when the value is not an `If-Match` field value.
 */
export function checkIfMatch(ifMatch: string | undefined, current: { id: string } | object): void {
  const id = (current as { id?: unknown }).id;
  if (!versionMatches(ifMatchVersions(ifMatch, typeof id === 'string' ? id : ''), current))
    throw preconditionFailed(current);
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
