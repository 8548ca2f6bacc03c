/**
 * @module End to end on PostgreSQL, over HTTP against the built `parley` command: a `DATABASE_URL`
 * server runs the API and delivers webhooks; two storage backends at once is a start-up error;
 * `parley migrate` then `DATABASE_MIGRATE=off` starts; pool metrics; (and `off` on a fresh database refuses,
 * naming `parley migrate`); `parley keys` works on PostgreSQL. Each run creates its own database.
 */
import { startReceiver, type Receiver } from '@parley/core/testing';
import {
  createTestDatabase,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
} from '@parley/adapter-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor } from '../test-support/api-client.js';
import { metricsPage, runCli, startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const KEY = 'postgres-e2e-key-0123456789abcdef';
const API_KEYS = JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]);

describeIfPostgres({ describe, it }, await probePostgres())('parley on DATABASE_URL', () => {
  let database: TestDatabase;
  const processes: ServerProcess[] = [];
  let receiver: Receiver | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(processes.map((running) => running.stop('SIGKILL')));
    await receiver?.close();
    await database?.drop();
  });

  const start = async (env: Record<string, string>, command: 'serve' | 'worker' = 'serve') => {
    const running = await startServerProcess(env, command);
    processes.push(running);
    return running;
  };

  it(
    'serves the API and delivers webhooks: agent, conversation, messages, history, webhooks delivered to a loopback receiver',
    { timeout: 60_000 },
    async () => {
      const server = await start({
        DATABASE_URL: database.url,
        PARLEY_SCHEMA: 'e2e',
        API_KEYS,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        METRICS_PORT: '0',
      });
      expect(server.output()).toContain('PostgreSQL at 127.0.0.1:5432');
      expect(server.output()).not.toContain(KEY);
      const call = apiFor(server.base, KEY);
      receiver = await startReceiver();
      await call('POST', '/api/webhooks', { url: `${receiver.url}/hook`, events: ['message.sent'] }, 201);
      const agent = await call('POST', '/api/agents', { name: 'Ada', description: 'Answers', model: 'modelA-4' }, 201);
      const conversation = await call('POST', '/api/conversations', { agentId: agent.id, userId: 'u1' }, 201);
      const sent = [];
      for (const content of ['one', 'two', 'three'])
        sent.push(await call('POST', `/api/conversations/${conversation.id}/messages`, { role: 'user', content }, 201));

      const newest = await call('GET', `/api/conversations/${conversation.id}/messages?limit=2`, undefined, 200);
      expect(newest.messages.map((message: { content: string }) => message.content)).toEqual(['two', 'three']);
      const older = await call(
        'GET',
        `/api/conversations/${conversation.id}/messages?limit=2&before=${newest.nextCursor}`,
        undefined,
        200,
      );
      expect(older.messages.map((message: { content: string }) => message.content)).toEqual(['one']);
      const stored = await call('GET', `/api/conversations/${conversation.id}`, undefined, 200);
      expect(stored.lastMessageAt).toBe(sent[2].createdAt);
      await call('PATCH', `/api/agents/${agent.id}`, { name: 'Ada Lovelace' }, 200);
      expect((await call('GET', `/api/agents/${agent.id}`, undefined, 200)).name).toBe('Ada Lovelace');

      await receiver.waitFor(3, 20_000);
      const delivered = receiver.received.map((request) => request.json);
      expect(delivered.map((event) => event.type)).toEqual(['message.sent', 'message.sent', 'message.sent']);
      expect(delivered.map((event) => event.data.id).sort()).toEqual(sent.map((message) => message.id).sort());
      expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
      // Pool metrics: the connections this process opened to PostgreSQL.
      const page = await metricsPage(server);
      const total = Number(/parley_database_pool_connections\{state="total"\} (\d+)/.exec(page)?.[1]);
      expect(total).toBeGreaterThanOrEqual(1);
      expect(page).toMatch(/parley_database_pool_connections\{state="waiting"\} \d+/);
      expect(await server.stop()).toBe(0);
    },
  );

  it(
    'parley worker on DATABASE_URL delivers what a DELIVERY_WORKER=false server recorded',
    { timeout: 60_000 },
    async () => {
      const env = { DATABASE_URL: database.url, PARLEY_SCHEMA: 'split', API_KEYS, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
      const server = await start({ ...env, DELIVERY_WORKER: 'false' });
      const hooks = await startReceiver();
      try {
        const call = apiFor(server.base, KEY);
        await call('POST', '/api/webhooks', { url: `${hooks.url}/hook`, events: ['agent.created'] }, 201);
        const agent = await call(
          'POST',
          '/api/agents',
          { name: 'Ada', description: 'Answers', model: 'modelA-4' },
          201,
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(hooks.received).toHaveLength(0); // nobody delivers yet
        const worker = await start(env, 'worker');
        await hooks.waitFor(1, 20_000);
        expect(hooks.received[0]!.json).toMatchObject({ type: 'agent.created', data: { id: agent.id } });
        expect(await worker.stop()).toBe(0);
        expect(await server.stop()).toBe(0);
      } finally {
        await hooks.close();
      }
    },
  );

  it('refuses two storage backends at start-up, naming them', async () => {
    const both = await runCli(['serve'], { DATABASE_URL: database.url, DATA_DIR: '/tmp/parley-never-used', PORT: '0' });
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('DATABASE_URL, DATA_DIR: Set one storage backend');
    const redis = await runCli(['serve', '--database-url', database.url], {
      REDIS_URL: 'redis://127.0.0.1:1',
      PORT: '0',
    });
    expect(redis.code).toBe(1);
    expect(redis.stderr).toContain('REDIS_URL, DATABASE_URL: Set one storage backend');
    expect(`${both.stderr}${redis.stderr}`).not.toContain('postgres://');
  });

  it(
    'DATABASE_MIGRATE=off refuses an unmigrated schema; parley migrate applies it once; then off starts',
    { timeout: 60_000 },
    async () => {
      const env = { DATABASE_URL: database.url, PARLEY_SCHEMA: 'released', API_KEYS };
      const refused = await runCli(['serve'], { ...env, DATABASE_MIGRATE: 'off', PORT: '0' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /schema "released" lacks migrations [\d, ]+ and DATABASE_MIGRATE=off: run `parley migrate`/,
      );

      const first = await runCli(['migrate'], env);
      expect(first).toMatchObject({ code: 0 });
      expect(first.stdout).toMatch(/^Applied migrations 1, 2.* schema "released"/);
      const again = await runCli(['migrate'], env);
      expect(again.stdout).toMatch(/Schema is current at version \d+ .*nothing to apply/);

      const server = await start({ ...env, DATABASE_MIGRATE: 'off' });
      const call = apiFor(server.base, KEY);
      await call('POST', '/api/agents', { name: 'Ada', description: 'Answers', model: 'modelA-4' }, 201);
      expect(await server.stop()).toBe(0);
    },
  );

  it(
    'parley keys create, list and revoke on PostgreSQL; a running server sees the key',
    { timeout: 60_000 },
    async () => {
      const env = { DATABASE_URL: database.url, PARLEY_SCHEMA: 'keys' };
      const created = await runCli(['keys', 'create', '--workspace', 'w1', '--plan', 'pro'], env);
      expect(created.code).toBe(0);
      const key = /key {4}(prl_\S+)/.exec(created.stdout)![1]!;
      const keyId = /keyId {2}(key_\S+)/.exec(created.stdout)![1]!;
      expect((await runCli(['keys', 'list'], env)).stdout).toContain(keyId);
      const server = await start(env);
      const call = apiFor(server.base, key);
      await call('GET', '/api/agents', undefined, 200);
      expect((await runCli(['keys', 'revoke', keyId], env)).code).toBe(0);
      expect((await runCli(['keys', 'list'], env)).stdout).not.toContain(keyId);
      await server.stop();
    },
  );
});
