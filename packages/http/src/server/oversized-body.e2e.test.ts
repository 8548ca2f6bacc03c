/**
 * @module Oversized bodies against a real listening server: 2 MiB and 8 MiB POSTs, with
 * `Content-Length` and chunked, through Node's `fetch` (undici), `curl` and a raw socket, 50 tries
 * each, 5 at a time. Every one reads the 413 in the error shape (never `fetch failed` / a reset), and the
 * client's next request succeeds (over a new connection: the 413 carries `Connection: close`).
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { serve, type ServerHandle } from './serve.js';
import { rawExchange, rawResponses } from '../test-support/raw-http.js';
import { tempDir } from '../test-support/redis.js';

const run = promisify(execFile);
const TRIES = 50;
/** Tries in flight at once: the server sees concurrent oversized uploads, and the file runs faster. */
const PARALLEL = 5;
/** 50 tries of 8 MiB on a busy 2-core CI machine: generous, so only a hang fails. */
const TIMEOUT_MS = 120_000;
const MiB = 1024 * 1024;
const SIZES = [2 * MiB, 8 * MiB];
const TOO_LARGE = {
  error: {
    code: 'payload_too_large',
    message: 'The request body is larger than 1048576 bytes.',
    details: { limitBytes: 1_048_576 },
  },
};

let handle: ServerHandle;
let key: string;
const directory = tempDir('oversized');
const bodies = new Map(SIZES.map((size) => [size, Buffer.alloc(size, 'x')]));
const files = new Map(SIZES.map((size) => [size, `${directory.dir}/body-${size}`]));

beforeAll(async () => {
  const core = createCore(memoryAdapters());
  key = (await core.apiKeys.issue({ workspaceId: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 })).key;
  handle = await serve(createApp(core, { logLevel: 'silent' }), { port: 0 });
  for (const [size, file] of files) writeFileSync(file, bodies.get(size)!);
});
afterAll(async () => {
  await handle.close();
  directory.remove();
});

/** Runs `attempt` {@link TRIES} times, {@link PARALLEL} at a time; the first failure fails the test. */
async function tries(attempt: () => Promise<void>): Promise<void> {
  let started = 0;
  const lane = async () => {
    while (started < TRIES) {
      started += 1;
      await attempt();
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
}

/** A body as a stream, so undici sends it chunked (no Content-Length). */
function stream(body: Buffer): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= body.length) return controller.close();
      controller.enqueue(body.subarray(offset, (offset += 65_536)));
    },
  });
}

describe.each(SIZES.map((size) => [`${size / MiB} MiB`, size] as const))('a %s POST', (_label, size) => {
  const body = bodies.get(size)!;

  it.each([false, true])(
    `fetch (chunked: %s): ${TRIES} tries, each reads the 413, and the next request succeeds`,
    async (chunked) => {
      const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
      await tries(async () => {
        const init = chunked ? { body: stream(body), duplex: 'half' } : { body };
        const response = await fetch(`${handle.url}/api/agents`, { method: 'POST', headers, ...init } as RequestInit);
        expect(response.status).toBe(413);
        expect(response.headers.get('Connection')).toBe('close');
        expect(await response.json()).toEqual(TOO_LARGE);
        const next = await fetch(`${handle.url}/api/agents`, { headers });
        expect(next.status).toBe(200);
        await next.arrayBuffer();
      });
    },
    TIMEOUT_MS,
  );

  it.each([false, true])(
    `curl (chunked: %s): ${TRIES} tries, each reads the 413, and the next transfer succeeds`,
    async (chunked) => {
      await tries(async () => {
        const { stdout } = await run('curl', [
          '-sS',
          '--max-time',
          '10',
          '-H',
          `Authorization: Bearer ${key}`,
          '-H',
          'Content-Type: application/json',
          ...(chunked ? ['-H', 'Transfer-Encoding: chunked'] : []),
          '-w',
          '\n%{http_code}\n',
          '--data-binary',
          `@${files.get(size)}`,
          `${handle.url}/api/agents`,
          // A second transfer in the same curl run: curl reuses the connection unless told to close.
          '--next',
          '-sS',
          '-H',
          `Authorization: Bearer ${key}`,
          '-w',
          '\n%{http_code}\n',
          `${handle.url}/api/agents`,
        ]);
        const [first, firstStatus, second, secondStatus] = stdout.trim().split('\n');
        expect(firstStatus).toBe('413');
        expect(JSON.parse(first!)).toEqual(TOO_LARGE);
        expect(secondStatus).toBe('200');
        expect(JSON.parse(second!)).toMatchObject({ agents: [] });
      });
    },
    TIMEOUT_MS,
  );

  it.each([false, true])(
    `a raw socket (chunked: %s): ${TRIES} tries, each reads the 413 and a graceful close, and a new connection serves the next request`,
    async (chunked) => {
      const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`;
      await tries(async () => {
        const head = [
          'POST /api/agents HTTP/1.1',
          'Host: 127.0.0.1',
          `Authorization: Bearer ${key}`,
          'Content-Type: application/json',
          'Connection: keep-alive',
          framing,
        ];
        const response = await rawExchange(handle.port, { head, body, chunked });
        expect(response.status).toBe(413);
        expect(response.headers.connection).toBe('close');
        expect(JSON.parse(response.body)).toEqual(TOO_LARGE);
        expect(response.closedByServer).toBe(true);
        expect(response.error).toBeUndefined();
        const next = await rawExchange(handle.port, {
          head: ['GET /api/agents HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${key}`],
        });
        expect(next.status).toBe(200);
      });
    },
    TIMEOUT_MS,
  );
});

describe('connections that stay open', () => {
  it('a refused small body (fully received) keeps the connection: a pipelined second request on it is answered', async () => {
    const body = JSON.stringify({ name: 'x' });
    const first = [
      'POST /api/agents HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      '',
      body,
    ].join('\r\n');
    const second = [
      'GET /api/agents HTTP/1.1',
      'Host: 127.0.0.1',
      `Authorization: Bearer ${key}`,
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    const responses = await rawResponses(handle.port, first + second);
    expect(responses.map((response) => response.status)).toEqual([401, 200]);
    expect(responses[0]!.headers.connection).not.toBe('close');
  });

  it('an 8 MiB upload refused with 401 before it was read is also readable, and closes', async () => {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const response = await fetch(`${handle.url}/api/agents`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: bodies.get(8 * MiB)!,
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('Connection')).toBe('close');
      expect(await response.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }
  });
});
