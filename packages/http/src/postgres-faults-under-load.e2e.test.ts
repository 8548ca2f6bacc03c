/**
 * @module PostgreSQL faults under load: a real `parley serve` on a private PostgreSQL server behind
 * a latency-adding TCP proxy, with 8 clients writing and reading and every webhook delivery
 * hanging at its receiver. The database slowed past the pool's deadlines, paused (SIGSTOP of every
 * server process), and stopped then started again: every request answers within a bound (503
 * during the fault), every acknowledged write reads back, deliveries go on, and the same process
 * recovers after each fault by itself.
 */
import { eventually, startReceiver, type Receiver } from '@parley/core/testing';
import { probePostgresBinaries, startPrivatePostgres, type PrivatePostgres } from '@parley/adapter-postgres/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLatencyProxy, type LatencyProxy } from './test-support/latency-proxy.js';
import { describeIfAvailable } from './test-support/redis.js';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

const describeServer = describeIfAvailable('A private PostgreSQL server', await probePostgresBinaries());

const KEY = 'pg-faults-under-load-key-012345';
const CLIENTS = 8;
/**
 * Every request answers within this, fault or not: a database outage answers 503 within 1 s
 * (docs/storage.md), with room for a loaded machine — the same bound as on Redis.
 */
const ANSWER_WITHIN_MS = 2_500;

interface Sample {
  phase: string;
  method: string;
  status: number;
  elapsedMs: number;
  id?: string;
}

describeServer('parley serve under load through PostgreSQL faults', () => {
  let database: PrivatePostgres;
  let proxy: LatencyProxy;
  let server: ServerProcess;
  let receiver: Receiver;

  beforeAll(async () => {
    database = await startPrivatePostgres();
    proxy = await startLatencyProxy(Number(new URL(database.url).port));
    receiver = await startReceiver();
    receiver.answer = () => 'hang';
    server = await startServerProcess({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
  });
  afterAll(async () => {
    database?.pause(false);
    await server?.stop('SIGKILL');
    await receiver?.release(200);
    await receiver?.close();
    await proxy?.close();
    await database?.destroy();
  });

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; elapsedMs: number }> {
    const started = Date.now();
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: await response.json(), elapsedMs: Date.now() - started };
  }

  const samples: Sample[] = [];
  async function load(phase: string, ms: number): Promise<Sample[]> {
    const until = Date.now() + ms;
    const before = samples.length;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, index) => {
        for (let round = 0; Date.now() < until; round += 1) {
          const created = await call('POST', '/api/agents', { name: `Load ${phase} ${index}-${round}`, description: 'Faults', model: 'modelA-4' });
          samples.push({ phase, method: 'POST', status: created.status, elapsedMs: created.elapsedMs, ...(created.status === 201 ? { id: created.body.id } : {}) });
          if (created.status === 201) {
            const read = await call('GET', `/api/agents/${created.body.id}`);
            samples.push({ phase, method: 'GET', status: read.status, elapsedMs: read.elapsedMs });
          }
        }
      }),
    );
    return samples.slice(before);
  }

  async function recovered(phase: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while ((await call('GET', '/api/agents?limit=1')).status !== 200) {
      if (Date.now() > deadline) throw new Error(`${phase}: GET /api/agents not 200 within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const after = await load(phase, 700);
    expect(after.length, `${phase}: requests ran`).toBeGreaterThan(0);
    expect(after.filter((sample) => sample.status >= 300), `${phase}: every request succeeds`).toEqual([]);
  }

  function failedFast(phase: string, during: Sample[]): void {
    expect(during.filter((sample) => sample.status === 503).length, `${phase}: some requests met the fault`).toBeGreaterThan(0);
    expect(during.filter((sample) => sample.status !== 503 && sample.status >= 300), `${phase}: only 2xx or 503`).toEqual([]);
  }

  async function acknowledgedReadBack(): Promise<void> {
    const ids = samples.flatMap((sample) => (sample.id ? [sample.id] : []));
    const lost: string[] = [];
    for (let index = 0; index < ids.length; index += 20) {
      const batch = ids.slice(index, index + 20);
      const reads = await Promise.all(batch.map((id) => call('GET', `/api/agents/${id}`)));
      reads.forEach((read, position) => read.status !== 200 && lost.push(`${batch[position]}: ${read.status}`));
    }
    expect(lost).toEqual([]);
  }

  it('slowed, paused, restarted: 503 in bounded time, nothing acknowledged lost, recovery without a restart of Parley', { timeout: 150_000 }, async () => {
    await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] });
    await recovered('hanging receiver');
    expect(receiver.hanging()).toBeGreaterThan(0);

    proxy.delayMs = 1_500; // past the 1 s deadline of a database call
    failedFast('slowed', await load('slowed', 1_500));
    proxy.delayMs = 0;
    await recovered('after slowed');

    database.pause(true);
    failedFast('paused', await load('paused', 2_000));
    database.pause(false);
    await recovered('after paused');

    await database.stop();
    failedFast('stopped', await load('stopped', 1_500));
    await database.start();
    await recovered('after restarted');
    await acknowledgedReadBack();

    // Delivery goes on: the receiver answers again (the attempts it held too), and a new agent's
    // event arrives, behind the backlog of the agents created under load.
    receiver.answer = () => 200;
    await receiver.release(200);
    const last = await call('POST', '/api/agents', { name: 'After the faults', description: 'Delivered', model: 'modelA-4' });
    expect(last.status).toBe(201);
    await eventually(() => receiver.received.some((webhook) => webhook.json.data.id === last.body.id), 30_000, 'delivery after PostgreSQL restarted');

    const slow = samples.filter((sample) => sample.elapsedMs > ANSWER_WITHIN_MS);
    expect(slow, `every request answered within ${ANSWER_WITHIN_MS} ms`).toEqual([]);
    await receiver.release(200);
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
