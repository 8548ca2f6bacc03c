/**
 * @module Tests of `parley keys` in process: usage errors, the Redis requirement, and create /
 * list / revoke against the real Redis (plan agreement, output that never shows hashes).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysCommand } from './keys-command.js';
import {
  REDIS_URL,
  deletePrefix,
  describeIfAvailable,
  CLOSED_PORT,
  probeRedis,
  uniquePrefix,
} from '../test-support/redis.js';

/** Runs `parley keys <argv…>` in process, capturing what it prints. */
async function keys(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await keysCommand(argv, env, { out: (text) => (stdout += text), err: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

describe('parley keys: usage', () => {
  it.each([
    [['create', '--plan', 'pro'], '--workspace: Required.'],
    [['create', '--workspace', 'acme'], '--plan: Required.'],
    [['create', '--workspace', 'acme', '--plan', 'gold'], '--plan: Expected one of free, pro, enterprise.'],
    [['create', '--workspace', 'a b', '--plan', 'pro'], '--workspace: Expected 1–128 letters'],
    [
      ['create', '--workspace', 'acme', '--plan', 'pro', '--scopes', 'agents:delete'],
      '--scopes: Expected one of agents:read',
    ],
    [
      ['create', '--workspace', 'acme', '--plan', 'pro', '--limit-per-hour', '1.5'],
      '--limit-per-hour: Expected a number.',
    ],
    [['create', '--workspace', 'acme', '--plan', 'pro', '--colour', 'red'], "Unknown option '--colour'"],
    [['list', '--plan', 'pro'], "'keys list' takes no --plan."],
    [['revoke'], "'keys revoke' takes one key id."],
    [['revoke', 'key_1', 'key_2'], "'keys revoke' takes one key id."],
    [['rotate'], "Unknown keys command 'rotate'."],
  ])('%j is a usage error (exit 2): %s', async (argv, message) => {
    const result = await keys(argv, { REDIS_URL });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Usage:\n  parley keys create');
    expect(result.stdout).toBe('');
  });

  it('--help prints the usage (exit 0)', async () => {
    const result = await keys(['--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('parley keys revoke <keyId>');
  });

  it('needs Redis or PostgreSQL, saying why', async () => {
    const result = await keys(['list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^parley keys: keys live in Redis or PostgreSQL: set REDIS_URL \(or REDIS_CLUSTER_NODES\).*DATABASE_URL \(or DATA_DIR\).*use API_KEYS instead\.\n$/,
    );
  });

  it('refuses two backends at once, naming them', async () => {
    const result = await keys(['list'], {
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://127.0.0.1/x',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('REDIS_URL, DATABASE_URL: Set one storage backend');
  });

  it('reports an unreachable Redis without hanging', async () => {
    const started = Date.now();
    const result = await keys(['list'], { REDIS_URL: `redis://127.0.0.1:${CLOSED_PORT}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^parley keys: Redis redis:\/\/127\.0\.0\.1:\d+ did not answer within 5 s \(.*ECONNREFUSED/,
    );
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('parley keys on Redis', () => {
  let client: Redis;
  const prefix = uniquePrefix('keys-cli');
  const env = { REDIS_URL, REDIS_PREFIX: prefix };

  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deletePrefix(client, prefix);
    await client.quit();
  });

  it('create prints the key once with its id; list shows ids and grants, never keys or hashes; revoke removes', async () => {
    const created = await keys(
      ['create', '--workspace', 'acme', '--plan', 'pro', '--scopes', 'agents:read, conversations:read'],
      env,
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const keyId = /^ {2}keyId {2}(key_\w+)$/m.exec(created.stdout)![1]!;
    const key = /^ {2}key {4}(prl_\S+)$/m.exec(created.stdout)![1]!;
    expect(created.stdout).toContain(
      'Created an API key for workspace "acme" (plan pro, scopes agents:read,conversations:read).',
    );
    expect(created.stdout.split(key)).toHaveLength(2);

    const stored = await client.hgetall(`${prefix}{keys}:byhash`);
    expect(Object.values(stored).join()).not.toContain(key);

    const listed = await keys(['list'], env);
    expect(listed.code).toBe(0);
    const [header, row, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(header!.split(/\s+/)).toEqual(['KEY', 'ID', 'WORKSPACE', 'PLAN', 'LIMIT/H', 'SCOPES', 'CREATED']);
    expect(row!.split(/\s+/)).toEqual([
      keyId,
      'acme',
      'pro',
      '-',
      'agents:read,conversations:read',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    ]);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toMatch(/[0-9a-f]{64}/);
    expect((await keys(['list', '--workspace', 'globex'], env)).stdout.trimEnd().split('\n')).toHaveLength(1);

    expect(await keys(['revoke', keyId], env)).toMatchObject({
      code: 0,
      stdout: `Revoked ${keyId}: requests with it answer 401 within 5 s on every server.\n`,
    });
    expect(await keys(['revoke', keyId], env)).toMatchObject({
      code: 1,
      stderr: `parley keys: no API key with id '${keyId}'.\n`,
    });
    expect((await keys(['list', '--workspace', 'acme'], env)).stdout.trimEnd().split('\n')).toHaveLength(1);
  });

  it("a new key must agree with its workspace's keys on plan and limit; enterprise needs a limit", async () => {
    const create = (...flags: string[]) => keys(['create', '--workspace', 'globex', ...flags], env);
    expect((await create('--plan', 'enterprise')).stderr).toContain(
      "the new key: plan 'enterprise' needs limitPerHour.",
    );
    const first = await create('--plan', 'enterprise', '--limit-per-hour', '25000', '--scopes=');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('(plan enterprise, 25000 requests per hour, no scopes)');
    const firstId = /(key_\w+)/.exec(first.stdout)![1]!;

    const otherPlan = await create('--plan', 'pro');
    expect(otherPlan.code).toBe(1);
    expect(otherPlan.stderr).toContain(
      `the new key: workspace 'globex' has plan 'enterprise' in key ${firstId} but 'pro'.`,
    );
    const otherLimit = await create('--plan', 'enterprise', '--limit-per-hour', '100');
    expect(otherLimit.stderr).toContain(`has limitPerHour 25000 in key ${firstId} but 100.`);
    expect((await create('--plan', 'enterprise', '--limit-per-hour', '25000')).code).toBe(0);
    expect((await keys(['list', '--workspace', 'globex'], env)).stdout.trimEnd().split('\n')).toHaveLength(3);
  });
});
