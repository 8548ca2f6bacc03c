/** @module Tests of the undici webhook transport against real receivers on loopback. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StaticHostResolver } from '../testing/host-resolver.js';
import { parseRetryAfter, undiciTransport, type ClosableWebhookTransport } from './undici-transport.js';

interface Receiver {
  url: string;
  requests: Array<{ method: string; headers: IncomingMessage['headers']; body: string }>;
  connections: number;
  port: number;
  server: Server;
}

const open: Array<{ close(): unknown }> = [];

async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  const state: Receiver = { url: '', requests: [], connections: 0, port: 0, server: undefined as unknown as Server };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      state.requests.push({ method: req.method!, headers: req.headers, body });
      handle(req, res);
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/hook`;
  state.server = server;
  open.push({ close: () => (server.closeAllConnections(), server.close()) });
  return state;
}

function transport(options: Parameters<typeof undiciTransport>[0]): ClosableWebhookTransport {
  const made = undiciTransport(options);
  open.push(made);
  return made;
}

afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

const request = (url: string) => ({
  url,
  headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
  body: '{"type":"x"}',
});

describe('undiciTransport', () => {
  it('POSTs the body and headers and reports the status and body', async () => {
    const target = await receiver((_req, res) => res.writeHead(204).end());
    const response = await transport({ allowPrivate: true }).send(request(target.url));
    expect(response).toMatchObject({ status: 204, error: null, retryAfterMs: null });
    expect(target.requests).toEqual([expect.objectContaining({ method: 'POST', body: '{"type":"x"}' })]);
    expect(target.requests[0]!.headers['webhook-id']).toBe('evt_1');
  });

  it('keeps only the first 4 KiB of a response body', async () => {
    const target = await receiver((_req, res) => res.writeHead(500).end('x'.repeat(10_000)));
    const response = await transport({ allowPrivate: true }).send(request(target.url));
    expect(response.status).toBe(500);
    expect(response.responseBody).toHaveLength(4096);
  });

  it('does not follow redirects', async () => {
    const target = await receiver((req, res) =>
      req.url === '/hook' ? res.writeHead(307, { location: '/elsewhere' }).end() : res.writeHead(200).end(),
    );
    const response = await transport({ allowPrivate: true }).send(request(target.url));
    expect(response.status).toBe(307);
    expect(target.requests).toHaveLength(1);
  });

  it('reads Retry-After on 429 and 503 only', async () => {
    let answer: [number, Record<string, string>] = [429, { 'retry-after': '120' }];
    const target = await receiver((_req, res) => res.writeHead(answer[0], answer[1]).end());
    const sender = transport({ allowPrivate: true });
    expect((await sender.send(request(target.url))).retryAfterMs).toBe(120_000);
    answer = [503, { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() }];
    const dated = (await sender.send(request(target.url))).retryAfterMs!;
    expect(dated).toBeGreaterThan(3_590_000);
    expect(dated).toBeLessThanOrEqual(3_600_000);
    answer = [500, { 'retry-after': '120' }];
    expect((await sender.send(request(target.url))).retryAfterMs).toBeNull();
  });

  it('parses Retry-After forms and caps them at 24 h', () => {
    expect(parseRetryAfter('5', 0)).toBe(5000);
    expect(parseRetryAfter('999999', 0)).toBe(86_400_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT'))).toBe(60_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 08:00:00 GMT'))).toBe(0);
    expect(parseRetryAfter('soon', 0)).toBeNull();
    expect(parseRetryAfter(undefined, 0)).toBeNull();
  });

  it('gives up after the total deadline when the receiver hangs', async () => {
    const target = await receiver(() => {});
    const response = await transport({ allowPrivate: true, timeoutMs: 300 }).send(request(target.url));
    expect(response.status).toBeNull();
    expect(response.error).toMatch(/Timed out/);
  });

  it('reports a refused connection', async () => {
    const target = await receiver((_req, res) => res.end());
    await new Promise((resolve) => target.server.close(resolve));
    const response = await transport({ allowPrivate: true }).send(request(target.url));
    expect(response).toMatchObject({ status: null, error: 'Connection refused.' });
  });

  it('never connects to a literal private address unless allowed', async () => {
    const target = await receiver((_req, res) => res.end());
    const response = await transport({}).send(request(target.url));
    expect(response.status).toBeNull();
    expect(response.error).toMatch(/Refused target.*loopback/);
    expect(target.connections).toBe(0);
    for (const url of [
      `http://[::ffff:127.0.0.1]:${target.port}/`,
      `http://2130706433:${target.port}/`,
      'http://169.254.169.254/latest',
    ]) {
      expect((await transport({}).send(request(url))).error).toMatch(/Refused target/);
    }
  });

  it('checks the address a name resolves to when connecting (DNS rebinding)', async () => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    // A public-looking name that resolves to loopback at delivery time.
    const resolver = new StaticHostResolver({ 'hooks.example.com': ['127.0.0.1'] });
    const url = `http://hooks.example.com:${target.port}/hook`;
    const refused = await transport({ resolver }).send(request(url));
    expect(refused.status).toBeNull();
    expect(refused.error).toMatch(/Refused target.*loopback/);
    expect(target.connections).toBe(0);
    // The same name reaches the receiver once private targets are allowed: the refusal above was the guard's.
    const allowed = await transport({ allowPrivate: true, resolver }).send(request(url));
    expect(allowed.status).toBe(200);
    expect(target.connections).toBe(1);
  });
});
