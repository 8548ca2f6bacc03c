/** @module Test helper: a TCP proxy on loopback that delays every chunk by an adjustable time, keeping each direction in order. Not built. */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A running proxy: set `delayMs` at any time; `close()` stops it and drops its connections. */
export interface LatencyProxy {
  port: number;
  delayMs: number;
  close(): Promise<void>;
}

/** Forwards `from` to `to`, each chunk `proxy.delayMs` after it arrived and never before an earlier one. */
function forward(from: Socket, to: Socket, proxy: LatencyProxy): void {
  const queue: Array<{ at: number; chunk: Buffer }> = [];
  let timer: NodeJS.Timeout | undefined;
  const pump = () => {
    timer = undefined;
    while (queue.length > 0 && queue[0]!.at <= Date.now()) {
      const { chunk } = queue.shift()!;
      if (!to.destroyed) to.write(chunk);
    }
    if (queue.length > 0) timer = setTimeout(pump, queue[0]!.at - Date.now());
  };
  from.on('data', (chunk: Buffer) => {
    const last = queue.at(-1)?.at ?? 0;
    queue.push({ at: Math.max(Date.now() + proxy.delayMs, last), chunk });
    if (timer === undefined) pump();
  });
  from.on('close', () => {
    clearTimeout(timer);
    to.destroy();
  });
  from.on('error', () => to.destroy());
}

/**
 * Starts a proxy on 127.0.0.1 (a free port) to `upstreamPort` on 127.0.0.1, with no delay at first;
 * `onConnection` is called as each client connects, before anything is forwarded.
 */
export async function startLatencyProxy(
  upstreamPort: number,
  { onConnection }: { onConnection?: () => void } = {},
): Promise<LatencyProxy> {
  const sockets = new Set<Socket>();
  const proxy: LatencyProxy = { port: 0, delayMs: 0, close: async () => {} };
  const server: Server = createServer((client) => {
    onConnection?.();
    const upstream = connect(upstreamPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    forward(client, upstream, proxy);
    forward(upstream, client, proxy);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return proxy;
}
