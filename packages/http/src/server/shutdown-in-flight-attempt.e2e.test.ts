/**
 * @module SIGTERM while a webhook attempt is in flight (docs/operations.md, "Processes"): a real
 * `parley serve`, on memory and on Redis, gets SIGTERM at a spread of moments around the attempt —
 * before the job is leased, between lease and send, while the receiver holds the request, while
 * the result is recorded — many times over. Whenever the receiver got a request, the process
 * must still be running when the receiver answers, the answer must reach an open connection, and
 * the process must exit 0 afterwards.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import { startServerProcess } from '../test-support/server-process.js';

const KEY = 'shutdown-in-flight-key-0123456789';
/** How long the receiver holds each request before answering `204`. */
const RECEIVER_DELAY_MS = 700;
/** For the `test` action: longer than an idle worker takes to stop (its lease poll, 1 s), so storage would be closed under the attempt. */
const SLOW_RECEIVER_DELAY_MS = 2_500;
/** SIGTERM this long after the write that emits the event: from before the relay took it to mid-attempt. */
const SIGTERM_OFFSETS_MS = [0, 1, 2, 3, 5, 8, 12, 20, 40, 80, 150, 300];

/** What the receiver saw of one request. */
interface Seen {
  answered: boolean;
  answeredAt?: number;
}

async function startSlowReceiver(delayMs: number) {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    const entry: Seen = { answered: false };
    seen.push(entry);
    request.resume();
    setTimeout(() => {
      if (response.destroyed) return; // the worker hung up: the attempt was abandoned
      response.writeHead(204).end(() => {
        entry.answered = true;
        entry.answeredAt = Date.now();
      });
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * One race: a server with one subscribed endpoint, an agent created (or, with `viaTest`, the
 * operator's `test` action: an attempt made inside an HTTP request), SIGTERM `offsetMs` later.
 */
async function race(offsetMs: number, env: Record<string, string>, viaTest = false) {
  const receiver = await startSlowReceiver(viaTest ? SLOW_RECEIVER_DELAY_MS : RECEIVER_DELAY_MS);
  const server = await startServerProcess({
    ...env,
    API_KEYS: JSON.stringify([{ key: KEY, workspace: 'drain', plan: 'pro' }]),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  try {
    const post = (path: string, body: unknown) =>
      fetch(`${server.base}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const endpoint = await post('/api/webhooks', { url: receiver.url, events: ['agent.created'] });
    expect(endpoint.status).toBe(201);
    const { id } = (await endpoint.json()) as { id: string };
    // The `test` action answers once its attempt is recorded: SIGTERM must not close storage under it.
    const tested = viaTest
      ? post(`/api/webhooks/${id}/test`, { eventType: 'agent.created' }).then(async (response) => ({
          status: response.status,
          body: await response.json(),
        }))
      : undefined;
    if (!viaTest)
      expect((await post('/api/agents', { name: 'A', description: 'B', model: 'modelA-4' })).status).toBe(201);
    else while (receiver.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, offsetMs));
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      server.child.once('exit', (code) => resolve({ code, at: Date.now() })),
    );
    server.child.kill('SIGTERM');
    const { code, at } = await exited;
    // A request that reached the receiver must have been waited for: answered before the exit.
    for (const entry of receiver.seen) {
      expect({ offsetMs, answered: entry.answered }).toEqual({ offsetMs, answered: true });
      expect(entry.answeredAt!).toBeLessThanOrEqual(at);
    }
    expect({ offsetMs, code, stderr: server.stderr() }).toEqual({ offsetMs, code: 0, stderr: '' });
    if (tested) expect(await tested).toMatchObject({ status: 200, body: { trigger: 'test', status: 204 } });
    return receiver.seen.length;
  } finally {
    server.child.kill('SIGKILL');
    await receiver.close();
  }
}

async function raceMany(env: () => Record<string, string>) {
  let attempts = 0;
  // The operator's `test` action: SIGTERM while its request holds the attempt, early and late.
  await Promise.all([0, 50, 300].map((offsetMs) => race(offsetMs, env(), true)));
  // Three servers at a time, each with its own receiver: the moments differ, the race is each one's own.
  for (let i = 0; i < SIGTERM_OFFSETS_MS.length; i += 3) {
    const counts = await Promise.all(SIGTERM_OFFSETS_MS.slice(i, i + 3).map((offsetMs) => race(offsetMs, env())));
    attempts += counts.reduce((sum, count) => sum + count, 0);
  }
  // Most races land after the attempt started; otherwise the test would prove little.
  expect(attempts).toBeGreaterThanOrEqual(SIGTERM_OFFSETS_MS.length / 2);
}

describe('SIGTERM waits for the webhook attempt in flight', () => {
  it('on memory storage, whatever the stage of the attempt', async () => {
    await raceMany(() => ({}));
  }, 90_000);
});

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());
describeRedis('SIGTERM waits for the webhook attempt in flight, on Redis', () => {
  it('whatever the stage of the attempt', async () => {
    const client = new Redis(REDIS_URL);
    const prefixes: string[] = [];
    try {
      await raceMany(() => {
        const prefix = uniquePrefix('drain');
        prefixes.push(prefix);
        return { REDIS_URL, REDIS_PREFIX: prefix };
      });
    } finally {
      for (const prefix of prefixes) await deletePrefix(client, prefix);
      client.disconnect();
    }
  }, 90_000);
});
