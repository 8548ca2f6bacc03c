/** @module Compression of large JSON responses (Hono's `compress`: gzip or deflate, by `Accept-Encoding`). */
import type { Context } from 'hono';
import { compress } from 'hono/compress';
import { textOf } from '../response.js';

/** Smallest JSON body that is compressed, in bytes: below it gzip's framing outweighs the savings. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** `application/json` and `+json` media types (RFC 6839), e.g. the OpenAPI document. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** An `Accept-Encoding` under which Hono's `compress` may choose a coding: one named, or `*`. */
const ACCEPTS_COMPRESSION = /gzip|deflate|\*/i;

const gzip = compress({ threshold: COMPRESSION_THRESHOLD_BYTES, contentTypeFilter: JSON_MEDIA_TYPE });
const responseAsBuilt = async () => {};

const encoder = new TextEncoder();
/** Room for the UTF-8 of a body just under the threshold, reused: sizing a body allocates nothing. */
const scratch = new Uint8Array(COMPRESSION_THRESHOLD_BYTES);

/** Whether `text`'s UTF-8 is shorter than the threshold, found without building it. */
function belowThreshold(text: string): boolean {
  // A UTF-16 code unit takes 1 to 3 bytes of UTF-8.
  if (text.length >= COMPRESSION_THRESHOLD_BYTES) return false;
  if (text.length * 3 < COMPRESSION_THRESHOLD_BYTES) return true;
  const { read, written } = encoder.encodeInto(text, scratch);
  return read === text.length && written < COMPRESSION_THRESHOLD_BYTES;
}

/**
 * Compresses `c.res`, once the pipeline has built it, when it is JSON of
 * {@link COMPRESSION_THRESHOLD_BYTES} or more and the request's `Accept-Encoding` allows gzip or
 * deflate (RFC 9110 §12.5.3), adding `Vary: Accept-Encoding`; `GET /openapi.json` (about 86 KB)
 * gzips to about 6.5 KB. Other media types (the reference page and its script, event streams)
 * pass through untouched. The request context (`request-context.ts`) runs it after the pipeline,
 * rather than as a middleware of its own: one step fewer for every request.
 *
 * Hono's `compress` decides the threshold from `Content-Length`, which `c.json()` does not set.
 * A body Parley built from a string (`response.ts`: routes and error responses) is sized from
 * that string in UTF-8 bytes: under the threshold (most API responses) it is sent as built, at or
 * over it compressed straight away. Other JSON bodies, already whole in memory, are read back here
 * and given a `Content-Length`. That copy made a small response cost about four times its CPU
 * (bench/PERFORMANCE-NOTES.md), so only the bodies that need it are copied.
 */
export async function compressJsonResponse(c: Context): Promise<void> {
  // A client that takes neither coding gets the response as built: measuring it would cost a
  // copy of every body. (An uncompressed response suits every client, so it needs no `Vary`.)
  if (!ACCEPTS_COMPRESSION.test(c.req.header('Accept-Encoding') ?? '')) return;
  const response = c.res;
  const text = textOf(c, response);
  if (text !== undefined) {
    // Sized by the string it was built from: sent as built, or compressed without a copy.
    if (text !== null && !belowThreshold(text)) await gzip(c, responseAsBuilt);
    return;
  }
  if (
    response.body &&
    !response.headers.has('Content-Length') &&
    JSON_MEDIA_TYPE.test(response.headers.get('Content-Type') ?? '')
  ) {
    const body = await response.arrayBuffer();
    const headers = new Headers(response.headers);
    headers.set('Content-Length', String(body.byteLength));
    c.res = new Response(body, { status: response.status, statusText: response.statusText, headers });
  }
  // With the response already built, `compress` only has to look at it and encode it.
  await gzip(c, responseAsBuilt);
}
