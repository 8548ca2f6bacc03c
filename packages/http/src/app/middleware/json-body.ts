/** @module Request bodies: size limit, media type and JSON parsing, in docs/errors.md's order. */
import { ErrorCode, ParleyError, isParleyError } from '@parley/core';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ParleyEnv } from '../env.js';
import { setHeader } from '../response.js';

/** Default largest request body: 1 MiB (docs/operations.md, `BODY_LIMIT_BYTES`). */
export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /** Largest accepted body in bytes; default {@link DEFAULT_BODY_LIMIT_BYTES}. */
  maxBytes?: number;
}

/**
 * What the middleware hands on: `c.req.valid('json')` is the parsed body, or `undefined` when the
 * request had none. It is deliberately `unknown`: services validate it with their own schemas.
 */
export interface JsonBodyInput {
  in: { json: unknown };
  out: { json: unknown };
}

/**
 * True for `application/json` with no charset or `charset=utf-8` (RFC 8259 §8.1: JSON exchanged
 * between systems is UTF-8). Other parameters are ignored; any other type or charset is refused.
 */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const [type, ...parameters] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name, value = ''] = parameter.split('=');
    if (name?.trim().toLowerCase() !== 'charset') return true;
    return (
      value
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase() === 'utf-8'
    );
  });
}

/**
 * True when `Content-Encoding` is absent or only `identity`. Parley decodes no content coding: a
 * compressed body would be read as malformed JSON, or — worse — as a different body, so it is
 * refused with 415 (RFC 9110 §8.4.1: an unacceptable coding "SHOULD" get 415).
 */
export function isIdentityEncoding(contentEncoding: string | undefined): boolean {
  if (contentEncoding === undefined) return true;
  return contentEncoding.split(',').every((coding) => ['', 'identity'].includes(coding.trim().toLowerCase()));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    // The parser's message would quote the input back; say only what is wrong.
    throw new ParleyError(ErrorCode.invalidRequest, 'The request body is not valid JSON.');
  }
}

/**
 * Reads a JSON request body for the route it is attached to:
 * 1. over `maxBytes` → 413 `payload_too_large`, by `Content-Length` or, for chunked bodies
 *    without one, by counting bytes as they stream in (`hono/body-limit`);
 * 2. a non-empty body that is not `application/json` (charset utf-8 allowed), or that has a
 *    `Content-Encoding` (gzip, br, …: none is decoded) → 415 `unsupported_media_type`, the
 *    latter with `Accept-Encoding: identity` (RFC 7694);
 * 3. malformed JSON or invalid UTF-8, or a body whose stream fails (the client broke off) → 400
 *    `invalid_request`.
 * An empty body is passed on as `undefined`, so the service reports a required body as
 * `validation_failed`. Attach it after the scope check: docs/errors.md puts 403 before 413.
 */
export function jsonBody(options: JsonBodyOptions = {}): MiddlewareHandler<ParleyEnv, string, JsonBodyInput> {
  const maxBytes = options.maxBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const tooLarge = () =>
    new ParleyError(ErrorCode.payloadTooLarge, `The request body is larger than ${maxBytes} bytes.`, {
      limitBytes: maxBytes,
    });
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge();
    },
  });
  // A body framed by Content-Length is judged by it before a byte is read, and then read straight
  // from the socket (@hono/node-server's direct path); only other bodies (chunked) stream through
  // `hono/body-limit`, which counts bytes but first builds a whole WHATWG Request.
  const limitByLength: typeof limit = async (c, next) => {
    const length = c.req.header('Content-Length');
    if (length === undefined || c.req.header('Transfer-Encoding') !== undefined) return limit(c, next);
    if (Number(length) > maxBytes) throw tooLarge();
    await next();
  };
  return async function jsonBody(c, next) {
    let bodyRead = false;
    try {
      await limitByLength(c, async () => {
        const bytes = new Uint8Array(await c.req.arrayBuffer());
        let body: unknown;
        if (bytes.byteLength > 0) {
          if (!isJsonMediaType(c.req.header('Content-Type'))) {
            throw new ParleyError(
              ErrorCode.unsupportedMediaType,
              'The request body must be JSON sent as Content-Type: application/json.',
            );
          }
          if (!isIdentityEncoding(c.req.header('Content-Encoding'))) {
            // RFC 7694 §3: name the codings the server does accept.
            setHeader(c, 'Accept-Encoding', 'identity');
            throw new ParleyError(
              ErrorCode.unsupportedMediaType,
              'The request body must not be compressed: no Content-Encoding is accepted.',
            );
          }
          body = parseJson(bytes);
        }
        // Hono types validated data as `{}`; any JSON value (or `undefined` for no body) is stored.
        c.req.addValidatedData('json', body as {});
        bodyRead = true;
        await next();
      });
    } catch (error) {
      if (bodyRead || isParleyError(error)) throw error;
      // The body stream failed: the client broke off, or sent framing the server's parser refused
      // (which then answered on its own). The client's doing, not a server fault to log as one.
      throw new ParleyError(ErrorCode.invalidRequest, 'The request body could not be read.', undefined, {
        cause: error,
      });
    }
  };
}
