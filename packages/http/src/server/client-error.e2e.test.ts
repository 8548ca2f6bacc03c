/**
 * @module Errors below the app, over raw sockets against a real listening server: what Node's
 * parser or the Hono adapter refuses before any route runs answers in the API's error shape and
 * closes; a compressed body is 415; the server goes on serving.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { serve, type ServerHandle } from './serve.js';
import { captureLogs } from '../test-support/harness.js';
import { rawExchange, rawResponses, type RawResponse } from '../test-support/raw-http.js';

let handle: ServerHandle;
let key: string;
const logs = captureLogs();

beforeAll(async () => {
  const core = createCore(memoryAdapters());
  key = (await core.apiKeys.issue({ workspaceId: 'acme', plan: 'pro' })).key;
  handle = await serve(createApp(core, { logger: logs.logger }), { port: 0 });
});
afterAll(async () => {
  await handle.close();
});

/** The first response to `bytes` written at once on a new connection. */
async function send(bytes: string): Promise<RawResponse> {
  const [response] = await rawResponses(handle.port, bytes);
  return response!;
}

function expectError(response: RawResponse, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers.connection).toBe('close');
  expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(response.body) as { error: { code: string; message: string } };
  expect(body).toEqual({ error: { code, message: expect.any(String) } });
  expect(response.closedByServer).toBe(true);
}

const post = (headers: string[], body: string) =>
  [
    `POST /api/agents HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    ...headers,
    '',
    body,
  ].join('\r\n');

describe('requests refused below the app answer in the error shape', () => {
  it('bad chunked encoding → 400 invalid_request', async () => {
    expectError(await send(post(['Transfer-Encoding: chunked'], 'zz\r\n{}\r\n0\r\n\r\n')), 400, 'invalid_request');
  });

  it('a bad chunk after a good one, while the app reads the body → 400 invalid_request, not a 500', async () => {
    const response = await send(post(['Transfer-Encoding: chunked'], '2\r\n{"\r\nnot-hex\r\n'));
    expectError(response, 400, 'invalid_request');
    expect(logs.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });

  it('two different Content-Length values → 400 invalid_request', async () => {
    expectError(await send(post(['Content-Length: 2', 'Content-Length: 3'], '{}')), 400, 'invalid_request');
  });

  it('Content-Length together with Transfer-Encoding: chunked → 400 invalid_request', async () => {
    expectError(
      await send(post(['Content-Length: 2', 'Transfer-Encoding: chunked'], '2\r\n{}\r\n0\r\n\r\n')),
      400,
      'invalid_request',
    );
  });

  it('an invalid Host → 400 invalid_request', async () => {
    expectError(
      await send(
        ['GET /api/agents HTTP/1.1', 'Host: exa mple.com', `Authorization: Bearer ${key}`, '', ''].join('\r\n'),
      ),
      400,
      'invalid_request',
    );
  });

  it('no Host on HTTP/1.1 → 400 invalid_request', async () => {
    expectError(
      await send(['GET /api/agents HTTP/1.1', `Authorization: Bearer ${key}`, '', ''].join('\r\n')),
      400,
      'invalid_request',
    );
  });

  it('two Host fields → 400 invalid_request (RFC 9112 §3.2)', async () => {
    expectError(
      await send(
        [
          'GET /api/agents HTTP/1.1',
          'Host: 127.0.0.1',
          'Host: example.com',
          `Authorization: Bearer ${key}`,
          '',
          '',
        ].join('\r\n'),
      ),
      400,
      'invalid_request',
    );
  });

  it('header fields over the server limit → 431 request_header_fields_too_large', async () => {
    const response = await send(
      ['GET /api/agents HTTP/1.1', 'Host: 127.0.0.1', `X-Padding: ${'a'.repeat(20_000)}`, '', ''].join('\r\n'),
    );
    expectError(response, 431, 'request_header_fields_too_large');
  });

  it('a request line that is not HTTP → 400 invalid_request', async () => {
    expectError(await send('NOT AN HTTP REQUEST\r\n\r\n'), 400, 'invalid_request');
  });

  it('HTTP/1.0 without Host is fine (it has no such requirement)', async () => {
    const response = await send(['GET /healthz HTTP/1.0', '', ''].join('\r\n'));
    expect(response.status).toBe(200);
  });
});

it('a request that does not arrive in time → 408 request_timeout', async () => {
  const slow = await serve(createApp(createCore(memoryAdapters()), { logLevel: 'silent' }), {
    port: 0,
    requestTimeoutMs: 300,
  });
  try {
    // Headers begun, never finished.
    const [response] = await rawResponses(slow.port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expectError(response!, 408, 'request_timeout');
  } finally {
    await slow.close();
  }
});

describe('a compressed body', () => {
  it('Content-Encoding: gzip → 415 unsupported_media_type with Accept-Encoding: identity', async () => {
    const response = await rawExchange(handle.port, {
      head: [
        'POST /api/agents HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        'Content-Encoding: gzip',
        'Content-Length: 2',
      ],
      body: Buffer.from('{}'),
    });
    expect(response.status).toBe(415);
    expect(response.headers['accept-encoding']).toBe('identity');
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'unsupported_media_type' } });
  });

  it('Content-Encoding: identity is accepted', async () => {
    const body = JSON.stringify({ name: 'Ada', description: 'd', model: 'modelA-4' });
    const response = await rawExchange(handle.port, {
      head: [
        'POST /api/agents HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        'Content-Encoding: identity',
        `Content-Length: ${body.length}`,
      ],
      body: Buffer.from(body),
    });
    expect(response.status).toBe(201);
  });
});

it('serves normally after all of that', async () => {
  const response = await fetch(`${handle.url}/api/agents`, { headers: { Authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
});
