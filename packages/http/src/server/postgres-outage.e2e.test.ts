/**
 * @module A `parley serve` on `DATABASE_URL` through a database outage (a private PostgreSQL
 * server, so the shared one is never touched): stopped or paused, requests and `/readyz` answer
 * 503 within about a second, without the database's details; started or resumed, the same
 * process answers 200 again with no restart.
 */
import {
  describeIfPostgres,
  probePostgresBinaries,
  startPrivatePostgres,
  type PrivatePostgres,
} from '@parley/adapter-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall } from '../test-support/api-client.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const KEY = 'postgres-outage-key-0123456789abcdef';
const API_KEYS = JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]);
// "Within 1 s" as the client sees it, with room for a busy 2-core test machine.
const ANSWER_MS = 1_500;

describeIfPostgres({ describe, it }, await probePostgresBinaries())('parley serve through a PostgreSQL outage', () => {
  let database: PrivatePostgres;
  let server: ServerProcess;
  let agentId: string;
  beforeAll(async () => {
    database = await startPrivatePostgres();
    server = await startServerProcess({ DATABASE_URL: database.url, API_KEYS });
    const created = await apiCall(server.base, KEY, 'POST', '/api/agents', {
      name: 'Ada',
      description: 'Answers',
      model: 'modelA-4',
    });
    expect(created.status).toBe(201);
    agentId = created.body.id;
  }, 60_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.destroy();
  });

  /** Status and time of a GET of the agent and of /readyz. */
  async function probe(): Promise<{ agent: number; ready: number; slowestMs: number; bodies: string }> {
    const started = Date.now();
    const [agent, ready] = await Promise.all([
      fetch(`${server.base}/api/agents/${agentId}`, { headers: { Authorization: `Bearer ${KEY}` } }),
      fetch(`${server.base}/readyz`),
    ]);
    const bodies = `${await agent.text()}${await ready.text()}`;
    return { agent: agent.status, ready: ready.status, slowestMs: Date.now() - started, bodies };
  }

  async function recovers(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { agent, ready } = await probe();
      if (agent === 200 && ready === 200) return;
      if (Date.now() > deadline) throw new Error(`no recovery within 20 s (agent ${agent}, readyz ${ready})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it(
    'a stopped database answers 503 within a second; started again, the same process answers 200',
    { timeout: 60_000 },
    async () => {
      await database.stop();
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const outcome = await probe();
        expect(outcome).toMatchObject({ agent: 503, ready: 503 });
        expect(outcome.slowestMs).toBeLessThan(ANSWER_MS);
        expect(outcome.bodies).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/);
      }
      await database.start();
      await recovers();
    },
  );

  it(
    'a paused database answers 503 within a second; resumed, the same process answers 200',
    { timeout: 60_000 },
    async () => {
      database.pause(true);
      try {
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const outcome = await probe();
          expect(outcome).toMatchObject({ agent: 503, ready: 503 });
          expect(outcome.slowestMs).toBeLessThan(ANSWER_MS);
        }
      } finally {
        database.pause(false);
      }
      await recovers();
      expect(server.child.exitCode).toBeNull();
    },
  );
});
