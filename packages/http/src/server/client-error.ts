/**
 * @module Errors below the app: requests Node's HTTP parser or the Hono adapter refuse before any
 * route runs (bad chunked encoding, conflicting `Content-Length`, oversized headers, a missing,
 * repeated or invalid `Host`) still answer in the API's error shape, wherever the server can
 * still write to the connection.
 */
import { ErrorCode } from '@parley/core';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { STATUS_BY_CODE } from '../app/http-errors.js';
import { lingeringClose } from './lingering-close.js';

/** The body of an error response: `{"error": {"code", "message"}}`, as every `/api` error. */
function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/**
 * A JSON error `Response` for failures the Hono adapter detects before the app runs (an invalid
 * `Host` or request target): 400 `invalid_request`, with `Connection: close` since the request
 * could not be read as meant.
 */
export function invalidRequestResponse(message = 'The request target or Host header is invalid.'): Response {
  return new Response(errorBody(ErrorCode.invalidRequest, message), {
    status: STATUS_BY_CODE.invalid_request,
    headers: { 'Content-Type': 'application/json', Connection: 'close', 'X-Request-Id': randomUUID() },
  });
}

/**
 * Why a request needs a 400 before it reaches the app, or `null`: HTTP/1.1 requires exactly one
 * `Host` field (RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any
 * HTTP/1.1 request message that lacks a Host header field and to any that contains more than one
 * Host header field line or a Host header field with an invalid field value"). Node checks only
 * for a missing one, answering with an empty body, so the server turns its check off and uses this.
 */
export function hostProblem(incoming: IncomingMessage): string | null {
  let hosts = 0;
  for (let i = 0; i < incoming.rawHeaders.length; i += 2)
    if (incoming.rawHeaders[i]!.toLowerCase() === 'host') hosts += 1;
  if (hosts > 1) return 'The request has more than one Host header.';
  if (hosts === 0 && incoming.httpVersion === '1.1') return 'The request has no Host header (HTTP/1.1 requires one).';
  return null;
}

/** What each parser failure answers; anything else is a generic 400. */
function describe(error: NodeJS.ErrnoException): { code: ErrorCode; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: ErrorCode.requestHeaderFieldsTooLarge, message: 'The request header fields are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: ErrorCode.requestTimeout, message: 'The request was not received in time.' };
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_STRICT':
      return { code: ErrorCode.invalidRequest, message: 'The chunked request body is malformed.' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return {
        code: ErrorCode.invalidRequest,
        message: 'The request framing is invalid: conflicting or malformed Content-Length or Transfer-Encoding.',
      };
    default:
      return { code: ErrorCode.invalidRequest, message: 'The request is not valid HTTP/1.1.' };
  }
}

const answered = new WeakSet<Duplex>();

/**
 * A whole HTTP/1.1 error response, written straight to a socket the parser gave up on:
 * status line, `Content-Type`, `Content-Length`, `Connection: close`, a fresh `X-Request-Id`,
 * and the JSON error body.
 */
export function rawErrorResponse(code: ErrorCode, message: string): string {
  const status = STATUS_BY_CODE[code];
  const body = errorBody(code, message);
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    `X-Request-Id: ${randomUUID()}`,
    '',
    body,
  ].join('\r\n');
}

/**
 * Listener of the server's `clientError` event (Node emits it for parse errors and request
 * timeouts, instead of writing its own empty `400`/`431`/`408`): writes the error in the API's
 * shape and closes the connection gracefully ({@link lingeringClose}). When nothing can be
 * written any more — the client reset the connection, or a response on it has already begun —
 * the socket is destroyed instead. Ignores repeats for a socket it already answered.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const { code, message } = describe(error);
  socket.write(rawErrorResponse(code, message));
  lingeringClose(socket as Socket);
}
