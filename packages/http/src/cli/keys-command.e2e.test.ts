/**
 * @module `parley keys create|list|revoke` end to end: the built CLI against Redis, with a
 * running `parley serve` on the same Redis: a created key works at once (200), a revoked one
 * answers 401 within 5 s.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import { runCli, startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('parley keys with parley serve (end to end)', () => {
  const env = { REDIS_URL, REDIS_PREFIX: uniquePrefix('keys-e2e') };
  let server: ServerProcess | undefined;
  let client: Redis;

  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await deletePrefix(client, env.REDIS_PREFIX);
    await client.quit();
  });

  const agents = (key: string) => fetch(`${server!.base}/api/agents`, { headers: { Authorization: `Bearer ${key}` } });

  it('a server with no keys says how to create one; a created key works at once; a revoked one is 401 within 5 s', async () => {
    server = await startServerProcess(env);
    expect(server.output()).toContain('No API keys yet');
    // `parley` when node_modules/.bin is on PATH (under npm test), else `npx parley` (the repository root).
    expect(server.output()).toMatch(/ {2}(npx )?parley keys create --workspace default --plan pro\n/);

    const created = await runCli(['keys', 'create', '--workspace', 'default', '--plan', 'free'], env);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const keyId = /^ {2}keyId {2}(key_\w+)$/m.exec(created.stdout)![1]!;
    const key = /^ {2}key {4}(prl_\S+)$/m.exec(created.stdout)![1]!;

    const allowed = await agents(key);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('ratelimit-policy')).toBe('"free";q=100;w=3600');

    const listed = await runCli(['keys', 'list', '--workspace', 'default'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${keyId} +default +free +- +\\* +\\d{4}-`, 'm'));
    expect(listed.stdout).not.toContain(key);

    expect(await runCli(['keys', 'revoke', keyId], env)).toMatchObject({ code: 0, stderr: '' });
    // The server caches known keys for up to 5 s (docs/authentication.md#revocation): poll.
    const revokedAt = Date.now();
    let refused = await agents(key);
    while (refused.status === 200 && Date.now() - revokedAt < 7_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      refused = await agents(key);
    }
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(5_500);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    expect((await runCli(['keys', 'list'], env)).stdout.trimEnd().split('\n')).toHaveLength(1);
  }, 40_000);

  it('parley --help documents the keys command and the Redis variables', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const text of [
      'keys           Create, list and revoke',
      'REDIS_CLUSTER_NODES',
      'REDIS_PREFIX',
      'RATE_LIMIT_FAILURE',
    ]) {
      expect(help.stdout).toContain(text);
    }
    const keysHelp = await runCli(['keys', '--help']);
    expect(keysHelp.stdout).toContain('parley keys create --workspace <id> --plan free|pro|enterprise');
  });

  it('without Redis the keys command refuses (memory keys die with the server)', async () => {
    const result = await runCli(['keys', 'list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('keys live in Redis');
  });
});
