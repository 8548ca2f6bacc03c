/** @module Serves a Hono app over Node's HTTP server (@hono/node-server), with a draining close. */
import { serve as nodeServe } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const SWEEP_INTERVAL_MS = 50;

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
 * Starts listening with `app.fetch` and resolves once the port is bound.
 * @throws the listen error (e.g. `EADDRINUSE`) as a rejection
 */
export function serve(app: { fetch: (request: Request) => Response | Promise<Response> }, options: ServeOptions = {}): Promise<ServerHandle> {
  const hostname = options.hostname ?? '127.0.0.1';
  const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    // No `createServer` option is passed, so this is node:http's Server.
    const server = nodeServe({ fetch: app.fetch, port: options.port ?? 3000, hostname }, (info: AddressInfo) => {
      server.off('error', reject);
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
    }) as Server;
    server.once('error', reject);
  });
}
