/**
 * @module Responses built once (docs/http.md#response-header-fields): the header fields Parley's
 * middleware and routes set are collected in a plain record on the context, and a route's
 * response is built with them in one step, which `@hono/node-server` writes without building a
 * WHATWG `Headers` at all. A response built any other way (a host's route, a stream) gets the
 * record copied onto it by {@link applyHeaderFields} before it is sent.
 */
import type { Context } from 'hono';
import type { ParleyEnv, ResponseHeaderFields } from './env.js';

/** Any app's context: the fields live in its `responseHeaders` variable ({@link ParleyEnv}). */
type AnyContext = Context<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A request's header fields, starting with `fields`. The response built with them is remembered
 * in the record rather than in a `WeakMap` keyed by response: a weak map's entries cost the
 * garbage collector work on every collection (bench/PERFORMANCE-NOTES.md).
 */
export function newHeaderFields(fields: Record<string, string>): ResponseHeaderFields {
  return { fields, built: undefined, textResponse: undefined, text: null };
}

function headerFields(c: AnyContext): ResponseHeaderFields {
  const parley = c as Context<ParleyEnv>;
  let fields = parley.get('responseHeaders');
  if (fields === undefined) parley.set('responseHeaders', (fields = newHeaderFields({})));
  return fields;
}

/**
 * Sets header field `name` (any case; kept lower-case, so a field set twice is sent once) to
 * `value` on the response this request will get, whichever builds it: the route's, or the error
 * handler's when something throws later.
 */
export function setHeader(c: AnyContext, name: string, value: string): void {
  const record = headerFields(c);
  record.fields[name.toLowerCase()] = value;
  record.built = undefined;
}

/** The value of header field `name` (lower-case) set with {@link setHeader}, if any. */
export function headerSet(c: AnyContext, name: string): string | undefined {
  return (c as Context<ParleyEnv>).get('responseHeaders')?.fields[name];
}

/** A copy of the request's header fields, e.g. for `c.json(value, status, fields)`. */
export function headerFieldsOf(c: AnyContext): Record<string, string> {
  // Object.assign, not a spread: on Node 20 a spread copy that then gets a field it lacked (the
  // error handler adds `content-type`) has a hidden class of its own, allocated in the old
  // generation, so every error response left garbage there (bench/PERFORMANCE-NOTES.md).
  return Object.assign({}, headerFields(c).fields);
}

/** A response with `body` (a string, or `null` for none), `status` and the request's header fields; `extra` fields are added. */
export function respond(
  c: AnyContext,
  body: string | null,
  status: number,
  extra?: Readonly<Record<string, string>>,
): Response {
  const record = headerFields(c);
  // Object.assign, not `{ ...fields, ...extra }`: on Node 20 that spread gives every object a
  // hidden class of its own (bench/PERFORMANCE-NOTES.md, "Node 20's object spread").
  const response = new Response(body, { status, headers: Object.assign({}, record.fields, extra) });
  record.built = response;
  return remembered(record, response, body);
}

/** `response`, remembered as built from `text` (`null`: no body) for {@link textOf}. */
export function builtFrom(c: AnyContext, response: Response, text: string | null): Response {
  return remembered(headerFields(c), response, text);
}

function remembered(record: ResponseHeaderFields, response: Response, text: string | null): Response {
  record.textResponse = response;
  record.text = text;
  return response;
}

/**
 * The string `response` was built from by {@link respond} or {@link builtFrom} (`null`: no body),
 * or `undefined` when it was built some other way: compression sizes a body with it instead of
 * reading it back.
 */
export function textOf(c: AnyContext, response: Response): string | null | undefined {
  const record = (c as Context<ParleyEnv>).get('responseHeaders');
  return record?.textResponse === response ? record.text : undefined;
}

const JSON_CONTENT_TYPE = Object.freeze({ 'content-type': 'application/json' });

/** `value` as `application/json` (RFC 8259) with `status` (default 200) and the request's header fields. */
export function json(c: AnyContext, value: unknown, status = 200): Response {
  return respond(c, JSON.stringify(value), status, JSON_CONTENT_TYPE);
}

/**
 * Copies the request's header fields onto `c.res` unless it was built with all of them
 * ({@link respond}): for responses built by Hono (`c.json`, a stream) or by a host, or fields set
 * after the response was built. Call it after `next()`; calling it again does nothing more.
 * Called before throwing, it puts them on the context's response, which Hono copies onto whatever
 * the error handler returns, even a response built without the context (a host's `onError`).
 */
export function applyHeaderFields(c: AnyContext): void {
  const headerFields = (c as Context<ParleyEnv>).get('responseHeaders');
  if (headerFields === undefined) return;
  const { fields } = headerFields;
  let response = c.res;
  if (headerFields.built === response) return;
  try {
    for (const name in fields) response.headers.set(name, fields[name]!);
  } catch {
    // Immutable headers (a Response straight from fetch()): replace it with a mutable copy.
    response = new Response(response.body, response);
    for (const name in fields) response.headers.set(name, fields[name]!);
    c.res = response;
  }
  headerFields.built = response;
}
