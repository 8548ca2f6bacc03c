/**
 * @module Serves a Hono app over Node's HTTP server (@hono/node-server's request listener), with
 * errors below the app in the API's shape, graceful closes after unread bodies, responses written
 * together at the end of each turn of the event loop, and a draining close.
 */
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { atTurnEnd } from '@parley/core/adapter';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerClientError, hostProblem, invalidRequestResponse } from './client-error.js';
import { closeIfBodyUnread } from './lingering-close.js';

const SWEEP_INTERVAL_MS = 50;

/**
 * `response`, handed to `@hono/node-server` for writing at the end of this turn of the event loop
 * ({@link atTurnEnd}), together with every other response that became ready in the turn — as Redis
 * writes its replies before it next waits for I/O. Under concurrent load the server then reads all
 * the requests that arrived, and answers them in one run of writes, instead of alternating a read
 * and a write per request; nothing changes for a lone request (docs/http.md, "Writes at the end of
 * the turn").
 */
function writeAtTurnEnd(response: Response, incoming: HttpBindings['incoming']): Promise<Response> {
  // Judged at write time: the body may have been read to its end meanwhile.
  return new Promise((resolve) => atTurnEnd(() => resolve(closeIfBodyUnread(response, incoming))));
}

/** Options of {@link serve}. */
export interface ServeOptions {
  /** TCP port; default 3000; 0 picks a free one (read it from the handle). */
  port?: number;
  /** Listening address; default `127.0.0.1`. */
  hostname?: string;
  /**
   * How long `close()` waits for in-flight requests before cutting the remaining connections;
   * default 10 000 ms, inside the usual 30 s grace period of container orchestrators.
   */
  drainTimeoutMs?: number;
  /**
   * How long a client may take to send a whole request (headers and body), in ms, before it is
   * answered 408 `request_timeout` and disconnected; default Node's (300 000, with 60 000 for the
   * headers). Lower it to shed slow clients sooner. Checked at a quarter of this, at most every 30 s.
   */
  requestTimeoutMs?: number;
}

/** A listening server. */
export interface ServerHandle {
  /** The Node HTTP server underneath. */
  server: Server;
  /** The port actually bound (useful with `port: 0`). */
  port: number;
  /** The address bound, e.g. `127.0.0.1`, or `::` for every IPv6 and IPv4 address. */
  hostname: string;
  /** `http://<hostname>:<port>`. */
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish (closing idle keep-alive
   * connections at once), and resolves when the server is closed. After `drainTimeoutMs` the
   * remaining connections are destroyed. Safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Starts listening with `app.fetch` and resolves once the port is bound. Below the app:
 * - the responses that became ready during one turn of the event loop are written together at its
 *   end, a response returned at once (not a promise) right away (see `writeAtTurnEnd` above);
 * - a response sent before the request body was read to its end (a 413, a 401 before a large
 *   upload) carries `Connection: close` and the connection closes gracefully, so the client
 *   reads the response instead of a reset, and a keep-alive client's next request goes over a
 *   new connection (see `lingering-close.ts` and the README);
 * - requests Node's parser refuses (bad chunked encoding, conflicting `Content-Length`, header
 *   fields over Node's 16 KiB limit → 431, request timeouts → 408) and a missing, repeated or
 *   invalid `Host` answer `{"error": {"code", "message"}}` and close (`client-error.ts`).
 * @throws the listen error (e.g. `EADDRINUSE`) as a rejection
 */
export function serve(
  app: { fetch: (request: Request, env: HttpBindings) => Response | Promise<Response> },
  options: ServeOptions = {},
): Promise<ServerHandle> {
  const hostname = options.hostname ?? '127.0.0.1';
  const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
  const listener = getRequestListener(
    (request, bindings) => {
      // This listener only ever runs under node:http's createServer below, never HTTP/2.
      const { incoming } = bindings as HttpBindings;
      const problem = hostProblem(incoming);
      if (problem !== null) return closeIfBodyUnread(invalidRequestResponse(problem), incoming);
      // Without an async frame of its own: one less promise per request on the hot path.
      const response = app.fetch(request, bindings as HttpBindings);
      return response instanceof Promise
        ? response.then((built) => writeAtTurnEnd(built, incoming))
        : closeIfBodyUnread(response, incoming);
    },
    // Called when no Request can be built (an invalid Host or request target).
    { hostname, errorHandler: () => invalidRequestResponse() },
  );
  const timeouts =
    options.requestTimeoutMs === undefined
      ? {}
      : {
          requestTimeout: options.requestTimeoutMs,
          headersTimeout: options.requestTimeoutMs,
          connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(options.requestTimeoutMs / 4))),
        };
  // `requireHostHeader: false`: Node would answer a missing Host with an empty 400; hostProblem() answers it in the API's shape.
  const server = createServer({ requireHostHeader: false, ...timeouts }, listener);
  server.on('clientError', answerClientError);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, hostname, () => {
      server.off('error', reject);
      const info = server.address() as AddressInfo;
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      let closing: Promise<void> | undefined;
      const close = () =>
        (closing ??= new Promise<void>((done, fail) => {
          const timer = setTimeout(() => server.closeAllConnections(), drainTimeoutMs).unref();
          // server.close() only drops connections idle at the time of the call; a keep-alive
          // connection whose request finishes later would hold the close open until the client
          // gives up on it, so keep sweeping until every connection is gone.
          const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_INTERVAL_MS).unref();
          server.close((error) => {
            clearTimeout(timer);
            clearInterval(sweep);
            return error ? fail(error) : done();
          });
          server.closeIdleConnections();
        }));
      resolve({ server, port: info.port, hostname: info.address, url: `http://${host}:${info.port}`, close });
    });
  });
}
