/**
 * @module Tests of server start-up on Redis: API_KEYS upserted once across restarts and
 * concurrent starts, no development key, plan conflicts with stored keys, Redis unreachable,
 * and a restart that loses nothing.
 */
import { ErrorCode, isParleyError } from '@parley/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../cli/config.js';
import { startServer, type RunningServer } from './start.js';
import {
  REDIS_URL,
  deletePrefix,
  describeIfAvailable,
  CLOSED_PORT,
  probeRedis,
  uniquePrefix,
} from '../test-support/redis.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

const ENTRIES = [
  { key: 'acme-admin-key-0123456789', workspace: 'acme', plan: 'pro' },
  { key: 'acme-reader-key-012345678', workspace: 'acme', plan: 'pro', scopes: ['agents:read'] },
];

describeRedis('startServer on Redis', () => {
  let client: Redis;
  const prefixes: string[] = [];

  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client, prefix);
    await client.quit();
  });

  /** A fresh prefix, deleted after the file. */
  const prefix = () => {
    const made = uniquePrefix('start');
    prefixes.push(made);
    return made;
  };

  async function start(env: Record<string, string>) {
    let printed = '';
    const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', REDIS_URL, ...env });
    const server = await startServer(config, { print: (text) => (printed += text) });
    return { server, printed };
  }

  const call = (server: RunningServer, key: string, path = '/api/agents', init: RequestInit = {}) =>
    fetch(`${server.handle.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    });

  it('without API_KEYS and without stored keys: no development key, but how to create one', async () => {
    const { server, printed } = await start({ REDIS_PREFIX: prefix() });
    try {
      expect(server.devKey).toBeUndefined();
      expect(printed).toMatch(
        /^Parley is listening on http:\/\/127\.0\.0\.1:\d+ \(Redis redis:\/\/[^)]+, key prefix "parley-test:start:/,
      );
      expect(printed).toContain('No API keys yet');
      // `parley` when node_modules/.bin is on PATH (under npm test), else `npx parley` (the repository root).
      expect(printed).toMatch(/ {2}(npx )?parley keys create --workspace default --plan pro\n/);
      expect(printed).not.toContain('KEY=');
      expect(await server.core.apiKeys.list()).toEqual([]);
      expect((await fetch(`${server.handle.url}/readyz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('upserts API_KEYS: a restart stores nothing twice and loses nothing; a changed entry updates in place', async () => {
    const env = { REDIS_PREFIX: prefix(), API_KEYS: JSON.stringify(ENTRIES) };
    const first = await start(env);
    expect(first.printed).toContain('API keys: 2 from API_KEYS (2 new, 0 updated, 0 unchanged); 2 in Redis in total.');
    const created = await call(first.server, ENTRIES[0]!.key, '/api/agents', {
      method: 'POST',
      body: JSON.stringify({ name: 'Ada', description: '', model: 'modelA-4' }),
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { id: string };
    const before = await first.server.core.apiKeys.list();
    await first.server.close();

    const second = await start(env);
    try {
      expect(second.printed).toContain(
        'API keys: 2 from API_KEYS (0 new, 0 updated, 2 unchanged); 2 in Redis in total.',
      );
      expect(await second.server.core.apiKeys.list()).toEqual(before);
      const read = await call(second.server, ENTRIES[1]!.key, `/api/agents/${agent.id}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ id: agent.id, name: 'Ada' });
    } finally {
      await second.server.close();
    }

    const widened = [ENTRIES[0], { ...ENTRIES[1], scopes: ['*'] }];
    const third = await start({ ...env, API_KEYS: JSON.stringify(widened) });
    try {
      expect(third.printed).toContain('(0 new, 1 updated, 1 unchanged)');
      const after = await third.server.core.apiKeys.list();
      expect(after.map((record) => record.keyId)).toEqual(before.map((record) => record.keyId));
      expect(after[1]!.scopes).toEqual(['*']);
      expect((await call(third.server, ENTRIES[1]!.key, '/api/agents', { method: 'POST', body: '{}' })).status).toBe(
        400,
      );
    } finally {
      await third.server.close();
    }
  });

  it('three instances starting at once with the same API_KEYS store each key once', async () => {
    const env = { REDIS_PREFIX: prefix(), API_KEYS: JSON.stringify(ENTRIES) };
    const started = await Promise.all([start(env), start(env), start(env)]);
    try {
      const keys = await started[0]!.server.core.apiKeys.list();
      expect(keys).toHaveLength(2);
      expect(new Set(keys.map((record) => record.hash)).size).toBe(2);
      const created = started.flatMap(({ printed }) => /\((\d) new/.exec(printed)![1]!).map(Number);
      expect(created.reduce((sum, count) => sum + count, 0)).toBe(2);
    } finally {
      await Promise.all(started.map(({ server }) => server.close()));
    }
  });

  it('refuses to start when API_KEYS disagrees with a stored key on the plan, writing nothing', async () => {
    const env = { REDIS_PREFIX: prefix() };
    const { server } = await start(env);
    const { record } = await server.core.apiKeys.issue({ workspaceId: 'acme', plan: 'free' });
    await server.close();
    const attempt = start({ ...env, API_KEYS: JSON.stringify(ENTRIES) });
    await expect(attempt).rejects.toThrow(
      `API_KEYS[0]: workspace 'acme' has plan 'free' in key ${record.keyId} (in Redis) but 'pro'.`,
    );
    await expect(attempt).rejects.toThrow(/revoke the key with `(npx )?parley keys revoke <keyId>`/);
    const check = await start(env);
    try {
      expect(await check.server.core.apiKeys.list()).toEqual([record]);
    } finally {
      await check.server.close();
    }
  });

  it('fails start-up with a clear message when Redis does not answer, leaving nothing open', async () => {
    const url = `redis://127.0.0.1:${CLOSED_PORT}`;
    const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', REDIS_URL: url });
    const started = Date.now();
    await expect(startServer(config, { print: () => {}, redisWaitMs: 1_000 })).rejects.toThrow(
      new RegExp(`^Redis ${url} did not answer within 1 s \\(.*ECONNREFUSED`),
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('close() drains, then closes the Redis client', async () => {
    const { server } = await start({ REDIS_PREFIX: prefix() });
    await server.core.storage.ping();
    await server.close();
    const error = await server.core.storage.ping().catch((rejection: unknown) => rejection);
    expect(isParleyError(error, ErrorCode.serviceUnavailable)).toBe(true);
    expect(String((error as Error).cause)).toContain('closed');
  });
});
