/**
 * @module Closing an HTTP/1.1 connection without losing the response: the staged ("lingering")
 * close of RFC 9112 §9.6, used when the server answers before it has read the whole request.
 *
 * Why not simply close: a server that closes a TCP connection while unread request bytes sit in
 * its receive buffer makes the kernel send a reset, and the client's kernel then drops the
 * response it had already received. Clients still uploading a large body (undici's `fetch`,
 * curl, a raw socket) saw `EPIPE` / `ECONNRESET` instead of the 413. So the server half-closes
 * (sends its FIN after the response), goes on reading and discarding what the client still sends,
 * and only closes fully once the client has closed its side too, or a bound is reached.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The longest a connection lingers after its response, in ms. Clients that read the response stop
 * sending at once; 5 s lets one that writes its whole body first finish on a slow link.
 */
export const LINGER_MS = 5_000;

/** The most request bytes read and discarded while lingering (checked every 100 ms); past it the connection is cut. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

const lingering = new WeakSet<Socket>();

/**
 * Half-closes `socket` once its pending writes are flushed, then reads and discards whatever the
 * client still sends until the client closes its side, {@link LINGER_MS} pass, or more than
 * {@link LINGER_MAX_BYTES} arrive; then destroys it. Idempotent.
 */
export function lingeringClose(socket: Socket): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  // Node's HTTP server parses straight from the socket's handle, so incoming bytes do not show
  // as 'data' events here: count them from the socket's total instead.
  const readBefore = socket.bytesRead;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  const meter = setInterval(() => {
    if (socket.bytesRead - readBefore > LINGER_MAX_BYTES) socket.destroy();
  }, 100);
  timer.unref();
  meter.unref();
  // The client's FIN: it sends nothing more, so nothing unread can trigger a reset.
  socket.once('end', () => socket.destroy());
  socket.once('close', () => {
    clearTimeout(timer);
    clearInterval(meter);
  });
  socket.end();
  // No 'data' listener here: Node's HTTP parser reads straight from the socket's handle and
  // resumes it on 'resume'; a 'data' listener would detach the parser and leave the socket's
  // read state stale. What the parser still reads goes to the request, which discards it.
  socket.resume();
}

/**
 * For a response about to be sent while `incoming`'s body has not been read to its end (a 413
 * by `Content-Length`, a chunked body cut off at the limit, a 401 before a large upload): returns
 * `response` with `Connection: close` (so Node ends the connection after it and the client
 * knows not to reuse it) and makes that end a {@link lingeringClose}. Otherwise returns
 * `response` unchanged and the connection stays open for the next request.
 *
 * Why close rather than drain the rest and keep the connection: draining obliges the server to
 * read, up to some bound, a body it has already refused, and past that bound it must close
 * anyway, so the close path has to be right regardless; with it, undici and curl stop uploading
 * as soon as they read the response, and a keep-alive client simply opens a new connection for
 * its next request (RFC 9112 §9.6, RFC 9110 §15.5.14).
 */
export function closeIfBodyUnread(response: Response, incoming: IncomingMessage): Response | Promise<Response> {
  // `complete` turns true once the parser has seen the whole message, read by the app or not
  // (at once for requests without a body). The common case answers at once, without a promise.
  return incoming.complete ? response : closeAfterTheParser(response, incoming);
}

async function closeAfterTheParser(response: Response, incoming: IncomingMessage): Promise<Response> {
  // An app that answers without awaiting any I/O can answer while the parser is still inside
  // the packet that carries the body: let it finish.
  await new Promise((resolve) => setImmediate(resolve));
  if (incoming.complete) return response;
  const socket = incoming.socket;
  // Node ends a `Connection: close` response with `socket.destroySoon()`, which destroys the
  // socket as soon as the FIN is out — with the rest of the body unread. Linger instead.
  socket.destroySoon = () => {
    // Keep the request flowing too: the HTTP parser pauses the socket whenever the request's
    // buffer is full, and the app's abandoned body stream (Readable.toWeb) pauses the request
    // whenever its own queue is. Drop its listeners and discard, as Node does for bodies nobody read.
    incoming.removeAllListeners('data');
    // pause() first: resume() on a stream already marked flowing would not ask the socket to read again.
    incoming.pause();
    incoming.resume();
    lingeringClose(socket);
  };
  const headers = new Headers(response.headers);
  headers.set('Connection', 'close');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
