/**
 * @module The metrics listener: `GET /metrics` in the Prometheus text format on its own port
 * (`METRICS_PORT`), apart from the API, so it needs no API key and can stay off the public network.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A listening metrics endpoint. */
export interface MetricsServerHandle {
  server: Server;
  /** The port actually bound (useful with `port: 0`). */
  port: number;
  /** `http://<hostname>:<port>/metrics`. */
  url: string;
  /** Stops listening and closes its connections. */
  close(): Promise<void>;
}

/**
 * Serves `registry` at `GET /metrics` (also `HEAD`) on `hostname:port`; any other path is 404,
 * any other method 405. A collection that fails (e.g. the delivery queue's store is down) answers
 * 503 with a one-line reason rather than a partial page.
 * @throws Error when the port cannot be bound
 */
export async function serveMetrics(
  registry: Registry,
  options: { port: number; hostname?: string },
): Promise<MetricsServerHandle> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics')
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    registry.metrics().then(
      (text) =>
        res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(503, { 'content-type': 'text/plain' }).end('Collecting metrics failed.\n'),
    );
  });
  const hostname = options.hostname ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  return { server, port, url: `http://${host}:${port}/metrics`, close };
}
