/** @module Runs a valibot schema and turns its failure into `validation_failed`. */
import * as v from 'valibot';
import { ErrorCode, ParleyError, type ValidationIssue } from './errors.js';

/**
 * The message of an issue without the received value, so details never echo input
 * (decisions §3). Custom messages set on a schema take precedence over this one.
 */
function describe(issue: v.BaseIssue<unknown>): string {
  if (issue.type === 'strict_object' && issue.expected === 'never') return 'Unknown field.';
  if (issue.received === 'undefined' && issue.kind === 'schema') return 'Required.';
  if (issue.type === 'picklist') return `Invalid value: expected one of ${issue.expected}.`;
  return issue.expected ? `Invalid ${issue.kind === 'schema' ? 'type' : 'value'}: expected ${issue.expected}.` : 'Invalid value.';
}

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
  const result = v.safeParse(schema, input, { message: describe });
  if (result.success) return result.output;
  const issues = result.issues.map(toIssue);
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join(' ');
  return failValidation(issues, summary);
}

function failValidation(issues: ValidationIssue[], summary: string): never {
  throw new ParleyError(ErrorCode.validationFailed, `Validation failed. ${summary}`, { issues });
}
