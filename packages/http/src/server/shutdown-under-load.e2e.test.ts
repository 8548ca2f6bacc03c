/**
 * @module Graceful shutdown under load (README "Security and reliability"): SIGTERM to a real
 * `parley serve` on Redis while 20 clients write and read and webhook deliveries are in flight.
 * Every answer that arrives is whole, every acknowledged write is readable through a fresh
 * process, every delivery the receiver got was waited for and logged, and the process exits 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiFor } from '../test-support/api-client.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());
const KEY = 'shutdown-under-load-key-0123456789';
const CLIENTS = 20;
const LOAD_MS = 3_000;
const SIGTERM_AT_MS = 1_200;
/** The receiver answers each delivery after this long, so some are in flight at SIGTERM. */
const RECEIVER_DELAY_MS = 400;

/** A webhook receiver that answers 200 after a delay and notes, per request, whether its answer was written before the connection closed. */
interface SlowReceiver {
  url: string;
  /** `webhook-id` → answered (true) or the connection closed before the answer (false). */
  outcomes: Map<string, boolean>;
  delayMs: number;
  /** Requests received and not answered yet. */
  open(): number;
  close(): Promise<void>;
}

async function startSlowReceiver(): Promise<SlowReceiver> {
  const outcomes = new Map<string, boolean>();
  let open = 0;
  const receiver: Partial<SlowReceiver> = { outcomes, delayMs: RECEIVER_DELAY_MS };
  const server: Server = createServer((request, response) => {
    const id = String(request.headers['webhook-id']);
    request.resume();
    let answered = false;
    open += 1;
    response.on('close', () => {
      open -= 1;
      outcomes.set(id, answered || (outcomes.get(id) ?? false));
    });
    setTimeout(() => {
      if (response.destroyed) return;
      answered = true;
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    }, receiver.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    open: () => open,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as SlowReceiver;
}

/** What one request of the load saw. */
type Outcome =
  { kind: 'whole'; status: number; body: any } | { kind: 'cut'; status: number; error: string } | { kind: 'no-answer' };

async function request(base: string, method: string, path: string, json?: unknown): Promise<Outcome> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${KEY}`,
        ...(json === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch {
    return { kind: 'no-answer' }; // refused or reset before any answer: nothing was acknowledged
  }
  try {
    const text = await response.text();
    const length = response.headers.get('Content-Length');
    if (length !== null && Buffer.byteLength(text) !== Number(length))
      return { kind: 'cut', status: response.status, error: `${Buffer.byteLength(text)} of ${length} bytes` };
    return { kind: 'whole', status: response.status, body: JSON.parse(text) };
  } catch (error) {
    return { kind: 'cut', status: response.status, error: String(error) };
  }
}

describeRedis('graceful shutdown under load', () => {
  let client: Redis;
  const prefix = uniquePrefix('shutdown');
  const processes: ServerProcess[] = [];
  let receiver: SlowReceiver;
  beforeAll(async () => {
    client = new Redis(REDIS_URL);
    receiver = await startSlowReceiver();
  });
  afterAll(async () => {
    await Promise.all(processes.map((running) => running.stop('SIGKILL')));
    await receiver.close();
    await deletePrefix(client, prefix);
    await client.quit();
  });

  const env = {
    REDIS_URL,
    REDIS_PREFIX: prefix,
    API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'info',
  };

  it(
    'SIGTERM mid-load: whole answers, no acknowledged write lost, in-flight deliveries finish, exit 0',
    { timeout: 60_000 },
    async () => {
      const first = await startServerProcess(env);
      processes.push(first);
      const call = apiFor(first.base, KEY);
      const endpoint = await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] }, 201);

      const outcomes: Outcome[] = [];
      const acknowledged: string[] = [];
      const started = Date.now();
      let exitCode: Promise<number | null> | undefined;
      let deliveriesInFlight = 0;
      // SIGTERM once the load has run a while and a delivery is being answered (on a loaded machine
      // the first deliveries may take a moment), so the drain provably has attempts to wait for.
      let sigterm: NodeJS.Timeout | undefined;
      const signalWhenBusy = () => {
        deliveriesInFlight = receiver.open();
        if (deliveriesInFlight > 0 || Date.now() - started > LOAD_MS - 500) exitCode = first.stop('SIGTERM');
        else sigterm = setTimeout(signalWhenBusy, 20);
      };
      sigterm = setTimeout(signalWhenBusy, SIGTERM_AT_MS);
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, index) => {
          for (let round = 0; Date.now() - started < LOAD_MS; round += 1) {
            const created = await request(first.base, 'POST', '/api/agents', {
              name: `Load ${index}-${round}`,
              description: 'Shutdown test',
              model: 'modelA-4',
            });
            outcomes.push(created);
            if (created.kind === 'whole' && created.status === 201) {
              acknowledged.push(created.body.id);
              outcomes.push(await request(first.base, 'GET', `/api/agents/${created.body.id}`));
            }
            // After SIGTERM new connections are refused at once: pace the loop instead of spinning.
            if (created.kind === 'no-answer') await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }),
      );
      clearTimeout(sigterm);
      expect(exitCode, 'SIGTERM was sent during the load').toBeDefined();
      expect(await exitCode).toBe(0);

      // Whole answers only, and only statuses the load can legitimately get.
      expect(outcomes.filter((outcome) => outcome.kind === 'cut')).toEqual([]);
      const statuses = new Set(outcomes.flatMap((outcome) => (outcome.kind === 'whole' ? [outcome.status] : [])));
      expect([...statuses].filter((status) => status !== 200 && status !== 201)).toEqual([]);
      expect(acknowledged.length).toBeGreaterThan(CLIENTS);

      // The close ran to its end (requests drained, worker stopped, Redis closed) without errors.
      const logs = first
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(logs.some((line) => line.msg === 'stopped')).toBe(true);
      expect(logs.filter((line) => line.level >= 50)).toEqual([]);

      // Deliveries: some were in flight at SIGTERM, and every one the receiver got was answered
      // before the connection closed (the worker waited for it).
      expect(deliveriesInFlight).toBeGreaterThan(0);
      const cutDeliveries = [...receiver.outcomes].filter(([, answered]) => !answered);
      expect(cutDeliveries).toEqual([]);

      // A fresh process on the same Redis reads every acknowledged agent, and the deliveries log
      // has a 200 for every delivery the receiver answered.
      receiver.delayMs = 0;
      const second = await startServerProcess({ ...env, DELIVERY_WORKER: 'false' });
      processes.push(second);
      const read = apiFor(second.base, KEY);
      const missing: string[] = [];
      for (let index = 0; index < acknowledged.length; index += 20) {
        const batch = acknowledged.slice(index, index + 20);
        const found = await Promise.all(batch.map((id) => request(second.base, 'GET', `/api/agents/${id}`)));
        found.forEach((outcome, position) => {
          if (outcome.kind !== 'whole' || outcome.status !== 200) missing.push(batch[position]!);
        });
      }
      expect(missing).toEqual([]);
      const logged = new Set<string>();
      let before: string | undefined;
      do {
        const page = await read(
          'GET',
          `/api/webhooks/${endpoint.id}/deliveries?limit=100${before ? `&before=${before}` : ''}`,
          undefined,
          200,
        );
        for (const attempt of page.deliveries) if (attempt.status === 200) logged.add(attempt.eventId);
        before = page.hasMore ? page.nextCursor : undefined;
      } while (before);
      expect([...receiver.outcomes.keys()].filter((id) => !logged.has(id))).toEqual([]);
      expect(await second.stop('SIGTERM')).toBe(0);
    },
  );
});
