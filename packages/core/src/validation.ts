/** @module Runs a valibot schema and turns its failure into `validation_failed`. */
import * as v from 'valibot';
import { ErrorCode, ParleyError, type ValidationIssue } from './errors.js';

/**
 * The message of an issue without the received value, so details never echo input
 * (docs/errors.md). Custom messages set on a schema take precedence over this one.
 */
function issueMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.type === 'strict_object' && issue.expected === 'never') return 'Unknown field.';
  if (issue.received === 'undefined' && issue.kind === 'schema') return 'Required.';
  if (issue.type === 'picklist') return `Invalid value: expected one of ${issue.expected}.`;
  return issue.expected
    ? `Invalid ${issue.kind === 'schema' ? 'type' : 'value'}: expected ${issue.expected}.`
    : 'Invalid value.';
}

const OBJECT_SCHEMA_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest']);
/**
 * Only a request body can be something other than an object at the root (a query is always one),
 * so such an input is reported at the path `body`, in words a caller acts on.
 */
const NO_BODY: ValidationIssue = { path: 'body', message: 'A JSON object is required: the request has no body.' };
const NOT_AN_OBJECT: ValidationIssue = { path: 'body', message: 'A JSON object is required.' };

/** U+0000, or a UTF-16 surrogate not part of a pair (with the `u` flag a pair is one code point, not `\p{Cs}`). */
const UNSTORABLE = /[\u0000\p{Cs}]/u;
/** Most issues {@link assertStorableStrings} reports: a 1 MiB body of bad strings must not answer 20 MiB. */
const MAX_STRING_ISSUES = 100;
const UNSTORABLE_VALUE = 'Must not contain U+0000 or an unpaired surrogate.';
const UNSTORABLE_KEY = 'A key must not contain U+0000 or an unpaired surrogate.';

interface Visit {
  value: unknown;
  key: string | undefined;
  parent: Visit | undefined;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}

/**
 * Refuses U+0000 and unpaired surrogates in every string of `input`, at any depth, object keys
 * included (docs/errors.md#strings): PostgreSQL stores neither (`text` and `jsonb` reject U+0000;
 * a lone surrogate has no UTF-8 form), so every backend refuses them alike. A value's issue is at
 * its path (`metadata.a.0`); a key's at the path of the object holding it (`metadata`; `''` at the
 * top), so the key is not echoed. The walk keeps its own stack: a 1 MiB body can nest 500 000 deep.
 * {@link parse} runs it on every input first; call it on other strings a request carries (path
 * parameters: `assertStorableStrings({ id })`) before they reach storage.
 *
 * @throws ParleyError `validation_failed` with one issue per such string (at most 100).
 */
export function assertStorableStrings(input: unknown): void {
  const issues: ValidationIssue[] = [];
  const stack: Visit[] = [{ value: input, key: undefined, parent: undefined }];
  for (let visit = stack.pop(); visit && issues.length < MAX_STRING_ISSUES; visit = stack.pop()) {
    const { value } = visit;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) issues.push({ path: pathOf(visit), message: UNSTORABLE_VALUE });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const keys = Object.keys(value);
    const badKeys = Array.isArray(value) ? [] : keys.filter((key) => UNSTORABLE.test(key));
    if (badKeys.length > 0) issues.push({ path: pathOf(visit), message: UNSTORABLE_KEY });
    // Pushed last to first, so values are reported in document order; not below a bad key, whose path would echo it.
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (badKeys.includes(key)) continue;
      stack.push({ value: (value as Record<string, unknown>)[key], key, parent: visit });
    }
  }
  if (issues.length > 0) throw validationFailed(issues);
}

/** Every U+0000 and unpaired surrogate of a string, for {@link storableText}. */
const UNSTORABLE_ALL = /[\u0000\p{Cs}]/gu;

/**
 * `text` with U+0000 and each unpaired surrogate replaced by U+FFFD (the replacement character,
 * as WHATWG `TextDecoder` does for invalid input); other text, well-formed pairs included, is
 * returned as is. For strings a server produced (a model's reply, a tool's or webhook receiver's
 * response, a provider's error message): nobody can be answered 400 for them, yet PostgreSQL
 * cannot store them (docs/errors.md#strings). A request's strings are refused instead
 * ({@link assertStorableStrings}).
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\ufffd') : text;
}

/**
 * A JSON value (as `JSON.parse` returns it) with {@link storableText} applied to every string
 * in it, object keys included, at any depth; other values are returned as they are.
 */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storableJson) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableJson(item)])) as T;
}

function toIssue(issue: v.BaseIssue<unknown>): ValidationIssue {
  return { path: issue.path?.map((item) => String(item.key)).join('.') ?? '', message: issue.message };
}

/**
 * Validates `input` against `schema` and returns the parsed output. Strings no backend stores
 * (U+0000, unpaired surrogates: {@link assertStorableStrings}) are refused first, before the schema
 * sees them, whatever the schema: every body and query a service takes is checked.
 *
 * @throws ParleyError `validation_failed` with `details.issues: [{path, message}]`, one entry per
 *   failed check, none of them containing the submitted value.
 */
export function parse<const TSchema extends v.GenericSchema>(schema: TSchema, input: unknown): v.InferOutput<TSchema> {
  // valibot's object schemas accept arrays (`typeof [] === 'object'`), which let a JSON `[]` body
  // through as an empty object (a 200 no-op PATCH). A body or query is never an array.
  if (OBJECT_SCHEMA_TYPES.has(schema.type)) {
    if (input === undefined) throw validationFailed([NO_BODY]);
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw validationFailed([NOT_AN_OBJECT]);
  }
  assertStorableStrings(input);
  const result = v.safeParse(schema, input, { message: issueMessage });
  if (result.success) return result.output;
  throw validationFailed(result.issues.map(toIssue));
}

/**
 * The `validation_failed` error for `issues`, shaped as {@link parse} throws it, for checks that
 * a schema cannot make (e.g. a webhook URL's host resolving to a private address). The messages
 * must not contain the submitted value.
 */
export function validationFailed(issues: ValidationIssue[]): ParleyError {
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join(' ');
  return new ParleyError(ErrorCode.validationFailed, `Validation failed. ${summary}`, { issues });
}
