/** @module Building blocks shared by the resource schemas. */
import * as v from 'valibot';
import type { JsonObject } from '../types.js';

/** Largest serialized size of a `metadata` / `configuration` object: 16 KiB (docs/api.md#resources). */
export const MAX_JSON_OBJECT_BYTES = 16 * 1024;
/** Deepest nesting of a `metadata` / `configuration` object (docs/api.md#resources). */
export const MAX_JSON_OBJECT_DEPTH = 8;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Depth of nested objects/arrays (a flat object is 1), or -1 when a forbidden key appears.
 * Stops descending one level past the maximum: a hostile body of 100 000 nested objects fits in
 * 1 MB and would otherwise overflow the stack (a 500 instead of a 400).
 */
function inspect(value: unknown, depth: number, maxDepth: number): number {
  if (typeof value !== 'object' || value === null) return depth - 1;
  if (depth > maxDepth) return depth;
  let deepest = depth;
  for (const key of Object.keys(value)) {
    if (!Array.isArray(value) && FORBIDDEN_KEYS.has(key)) return -1;
    const child = inspect((value as Record<string, unknown>)[key], depth + 1, maxDepth);
    if (child < 0) return -1;
    deepest = Math.max(deepest, child);
  }
  return deepest;
}

/**
 * What is wrong with a JSON object `value` nested at most `maxDepth` levels and at most `maxBytes`
 * serialized (UTF-8), without `__proto__`, `constructor` or `prototype` keys; `null` when nothing.
 * The size is measured only once the shape passed (serializing a too-deep value could overflow the
 * stack).
 */
export function jsonObjectProblem(value: JsonObject, maxDepth: number, maxBytes: number): string | null {
  const depth = inspect(value, 1, maxDepth);
  if (depth === -1) return 'Keys __proto__, constructor and prototype are not allowed.';
  if (depth > maxDepth) return `Nested deeper than ${maxDepth} levels.`;
  if (Buffer.byteLength(JSON.stringify(value)) > maxBytes) return `Larger than ${maxBytes} bytes serialized.`;
  return null;
}

/**
 * A JSON object (not an array) of at most 16 KiB serialized (UTF-8), nested at most 8 levels,
 * without `__proto__`, `constructor` or `prototype` keys at any level. One walk decides the
 * shape; the size is measured only once the shape passed (serializing a too-deep value could
 * overflow the stack).
 */
export const JsonObjectSchema = v.pipe(
  v.custom<JsonObject>(isPlainObject, 'Invalid type: expected a JSON object.'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = jsonObjectProblem(dataset.value, MAX_JSON_OBJECT_DEPTH, MAX_JSON_OBJECT_BYTES);
    if (problem !== null) addIssue({ message: problem });
  }),
  // JSON Schema cannot express the checks above: the OpenAPI document states them in words.
  v.metadata({
    type: 'object',
    description: `A JSON object of at most ${MAX_JSON_OBJECT_BYTES} bytes serialized, nested at most ${MAX_JSON_OBJECT_DEPTH} levels, without \`__proto__\`, \`constructor\` or \`prototype\` keys.`,
  }),
);

/**
 * What an integer parameter allows, in words a caller can act on: a maximum that only guards
 * against unsafe integers (`Number.MAX_SAFE_INTEGER`) is not worth stating.
 */
function integerMessage(min: number, max: number): string {
  return max >= Number.MAX_SAFE_INTEGER
    ? `Expected an integer; must be at least ${min}.`
    : `Expected an integer from ${min} to ${max}.`;
}

/**
 * An integer query or path parameter in `[min, max]`: a number, or a string of at most 16 decimal
 * digits as it arrives in a URL. Every failure reports `message`.
 */
export function integerParam(min: number, max: number, message = integerMessage(min, max)) {
  return v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,16}$/), v.transform(Number))], message),
    v.integer(message),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
}

/** Default and largest `limit` of page-numbered lists (docs/pagination.md). */
export const PAGE_LIMIT = { default: 20, max: 100 } as const;

/** `page` (≥ 1, default 1) and `limit` (1–100, default 20) of page-numbered lists. */
export const PageQueryEntries = {
  page: v.optional(integerParam(1, Number.MAX_SAFE_INTEGER), 1),
  limit: v.optional(integerParam(1, PAGE_LIMIT.max), PAGE_LIMIT.default),
};

/** A string of `min` (default 1) to `max` characters, counted in UTF-16 code units. */
export function text(max: number, min = 1) {
  return v.pipe(
    v.string(),
    v.minLength(min, `Expected at least ${min} character(s).`),
    v.maxLength(max, `Expected at most ${max} characters.`),
  );
}
