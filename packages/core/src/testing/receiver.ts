/** @module A real webhook receiver on loopback for tests: records what it gets and answers as told (a status, headers, a body, or never). */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** `Date.now()` when it arrived. */
  at: number;
}

/** How to answer: a status (with headers and body), or `'hang'` to never answer. */
export type ReceiverAnswer = number | { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A running receiver. */
export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Decides each answer; replace it at any time (default 200). */
  answer: (request: ReceivedWebhook, index: number) => ReceiverAnswer;
  /** Resolves once `count` requests arrived (rejects after `timeoutMs`, default 10 s). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Requests whose answer was `'hang'` and are still open. */
  hanging(): number;
  /**
   * Answers every hanging request with `status`; resolves `true` when at least one was open and
   * its answer was fully written (the sender was still waiting for it).
   */
  release(status: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 at `port` (default a free one). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const open = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => 200,
    waitFor(count, timeoutMs = 10_000) {
      if (receiver.received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receiver.received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    hanging: () => open.size,
    release: async (status) => {
      const pending = [...open];
      open.clear();
      const written = await Promise.all(
        pending.map(
          (response) =>
            new Promise<boolean>((resolve) => {
              if (response.destroyed) return resolve(false);
              response.once('finish', () => resolve(true));
              response.once('close', () => resolve(response.writableFinished));
              response.writeHead(status).end();
            }),
        ),
      );
      return written.some(Boolean);
    },
    close: () =>
      new Promise((resolve) => {
        for (const response of open) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: ReceivedWebhook['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: '', timestamp: '', data: {} };
      }
      const entry: ReceivedWebhook = {
        id: String(request.headers['webhook-id']),
        timestamp: String(request.headers['webhook-timestamp']),
        signature: String(request.headers['webhook-signature']),
        headers: request.headers,
        body,
        json,
        at: Date.now(),
      };
      const index = receiver.received.push(entry) - 1;
      for (const waiter of waiters.filter((item) => receiver.received.length >= item.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const answer = receiver.answer(entry, index);
      if (answer === 'hang') {
        open.add(response);
        response.on('close', () => open.delete(response));
        return;
      }
      const {
        status,
        headers,
        body: text,
      } = typeof answer === 'number' ? { status: answer, headers: {}, body: '' } : answer;
      response.writeHead(status, headers).end(text ?? '');
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/webhooks`;
  return receiver;
}

/** The headers `standardwebhooks`' `Webhook.verify` reads. */
export function verifyHeaders(received: ReceivedWebhook): Record<string, string> {
  return {
    'webhook-id': received.id,
    'webhook-timestamp': received.timestamp,
    'webhook-signature': received.signature,
  };
}

/** Polls `check` every 20 ms until it returns true (rejects after `timeoutMs`, default 10 s). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
