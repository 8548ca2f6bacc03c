/**
 * @module The load the faults-under-load tests drive through a `parley serve` while its store is
 * slowed, paused or restarted: clients creating an agent and reading it back, every answer kept
 * as a sample, and the checks made of them (failed fast during a fault, recovered after it, no
 * acknowledged write lost).
 */
import { expect } from 'vitest';
import type { ServerProcess } from './server-process.js';

/** One request of the load: its phase, method, status, time to answer and, for a 201, the agent's id. */
export interface Sample {
  phase: string;
  method: string;
  status: number;
  elapsedMs: number;
  id?: string;
}

/** Settings of {@link faultsLoad}. */
export interface FaultsLoadOptions {
  /** The server under load, read when a request is made. */
  server: () => ServerProcess;
  /** A bearer key with a limit the load cannot reach. */
  key: string;
  /** Concurrent clients (each creates, then reads back, in a loop). */
  clients: number;
  /** A request not answered within this fails the test, in ms. */
  callTimeoutMs: number;
  /** How long `recovered` waits for a first 200, in ms. */
  recoverWithinMs: number;
}

/** The load's requests and checks over one server; `samples` holds every sample taken so far. */
export function faultsLoad(options: FaultsLoadOptions) {
  const samples: Sample[] = [];

  async function call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; elapsedMs: number }> {
    const started = Date.now();
    const server = options.server();
    try {
      const response = await fetch(`${server.base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.key}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.callTimeoutMs),
      });
      return { status: response.status, body: await response.json(), elapsedMs: Date.now() - started };
    } catch (error) {
      // A reset or refused connection usually means the server went down: say how, with its stderr.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { exitCode, signalCode } = server.child;
      if (exitCode === null && signalCode === null) throw error;
      throw new Error(`${method} ${path}: the server exited (${exitCode ?? signalCode}):\n${server.stderr()}`, {
        cause: error,
      });
    }
  }

  /** Runs the load for `ms` (each client creating an agent, then reading it back). */
  async function load(phase: string, ms: number): Promise<Sample[]> {
    const until = Date.now() + ms;
    const before = samples.length;
    await Promise.all(
      Array.from({ length: options.clients }, async (_, index) => {
        for (let round = 0; Date.now() < until; round += 1) {
          const created = await call('POST', '/api/agents', {
            name: `Load ${phase} ${index}-${round}`,
            description: 'Faults',
            model: 'modelA-4',
          });
          samples.push({
            phase,
            method: 'POST',
            status: created.status,
            elapsedMs: created.elapsedMs,
            ...(created.status === 201 ? { id: created.body.id } : {}),
          });
          if (created.status === 201) {
            const read = await call('GET', `/api/agents/${created.body.id}`);
            samples.push({ phase, method: 'GET', status: read.status, elapsedMs: read.elapsedMs });
          }
        }
      }),
    );
    return samples.slice(before);
  }

  /** Waits (bounded) until a read succeeds, then runs the load: every request must succeed. */
  async function recovered(phase: string): Promise<void> {
    const deadline = Date.now() + options.recoverWithinMs;
    while ((await call('GET', '/api/agents?limit=1')).status !== 200) {
      if (Date.now() > deadline)
        throw new Error(`${phase}: GET /api/agents not 200 within ${options.recoverWithinMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const after = await load(phase, 700);
    expect(after.length, `${phase}: requests ran`).toBeGreaterThan(0);
    expect(
      after.filter((sample) => sample.status >= 300),
      `${phase}: every request succeeds`,
    ).toEqual([]);
  }

  /** Every sample of `phase` answered with a 2xx or a 503, and some met the fault. */
  function failedFast(phase: string, during: Sample[]): void {
    expect(
      during.filter((sample) => sample.status === 503).length,
      `${phase}: some requests met the fault`,
    ).toBeGreaterThan(0);
    expect(
      during.filter((sample) => sample.status !== 503 && sample.status >= 300),
      `${phase}: only 2xx or 503`,
    ).toEqual([]);
  }

  /** Every agent acknowledged with 201 so far reads back. */
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

  return { samples, call, load, recovered, failedFast, acknowledgedReadBack };
}
