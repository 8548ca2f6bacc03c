/** @module The benchmarks' webhook receiver: on loopback, answers 204 at once and counts what arrived. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening receiver: its URL (`path` appended), how many requests arrived so far, and `close()`. */
export interface CountingReceiver {
  url: string;
  delivered(): number;
  close(): void;
}

/** Starts a {@link CountingReceiver} on 127.0.0.1 at a free port; resolves once it listens. */
export async function startCountingReceiver(path = '/webhooks'): Promise<CountingReceiver> {
  let delivered = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      delivered += 1;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    delivered: () => delivered,
    close: () => server.close(),
  };
}
