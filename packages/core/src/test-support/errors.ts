/**
 * @module Test helpers for the services' errors: the `ParleyError` a call rejects with, and input
 * that validation messages must never echo. Not built (see `tsconfig.json`).
 */
import { ParleyError } from '../errors.js';

/** The `ParleyError` `promise` rejects with; any other outcome fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<ParleyError> {
  const error = await promise.then(
    () => new Error('Expected a rejection, but the promise resolved.'),
    (reason: unknown) => reason,
  );
  if (error instanceof ParleyError) return error;
  throw error;
}

/** The distinct paths of a `validation_failed` error's `details.issues`. */
export const issuePaths = (error: ParleyError): string[] => [
  ...new Set((error.details?.['issues'] as Array<{ path: string }>).map((issue) => issue.path)),
];

/** A marker put into refused input, so a test can check that no message or detail repeats it. */
export const MARK = 'Zq9-SUBMITTED-VALUE';

/** A string of exactly `length` characters that contains {@link MARK}. */
export const sized = (length: number): string => MARK + 'x'.repeat(length - MARK.length);
