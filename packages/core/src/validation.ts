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
  return issue.expected ? `Invalid ${issue.kind === 'schema' ? 'type' : 'value'}: expected ${issue.expected}.` : 'Invalid value.';
}

const OBJECT_SCHEMA_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest']);
/**
 * Only a request body can be something other than an object at the root (a query is always one),
 * so such an input is reported at the path `body`, in words a caller acts on.
 */
const NO_BODY: ValidationIssue = { path: 'body', message: 'A JSON object is required: the request has no body.' };
const NOT_AN_OBJECT: ValidationIssue = { path: 'body', message: 'A JSON object is required.' };

function toIssue(issue: v.BaseIssue<unknown>): ValidationIssue {
  return { path: issue.path?.map((item) => String(item.key)).join('.') ?? '', message: issue.message };
}

/**
 * Validates `input` against `schema` and returns the parsed output.
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
