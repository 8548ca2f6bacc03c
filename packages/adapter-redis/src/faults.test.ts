/**
 * @module Redis errors leave the adapter without command arguments: a failing script (a bug,
 * passed through) and a refused write (`OOM`, mapped to `service_unavailable`) against a real Redis.
 */
import { ErrorCode, isParleyError } from '@parley/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisRunner } from './connection.js';
import { namedScript } from './script.js';
import { isConnectionFault } from './faults.js';
import { REDIS_URL, describeIfAvailable, probeRedis, uniquePrefix } from '../test/redis-available.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());
const SECRET = 'planted-argument-0b5e7c1d9f';

/** Every enumerable property of `error` and its linked errors, as pino's serializer would see them. */
function dump(error: unknown): string {
  const seen = new Set<unknown>();
  return JSON.stringify(error, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null) return value;
    if (seen.has(value)) return undefined;
    seen.add(value);
    return value instanceof Error ? { ...value, message: value.message, cause: value.cause } : value;
  });
}

describeRedis('Redis errors carry no command arguments', () => {
  let client: Redis;
  let runner: RedisRunner;
  const prefix = uniquePrefix('faults');

  beforeAll(() => {
    client = new Redis(REDIS_URL);
    runner = new RedisRunner(client, 1_000, prefix);
  });
  afterAll(async () => {
    await client.quit();
  });

  it('a failing script (a bug) passes through as is, keeping the command name but not its arguments', async () => {
    const failing = namedScript({
      name: 'faults_test_failing',
      keys: ['key'],
      args: ['secret'],
      lua: "return redis.call('SET', key)",
    });
    const error = await runner.script(failing, { keys: { key: `${prefix}k` }, args: { secret: SECRET } }).then(
      () => null,
      (rejection: unknown) => rejection,
    );
    expect(error).toMatchObject({ name: 'ReplyError' });
    expect(isParleyError(error)).toBe(false);
    expect((error as { command?: unknown }).command).toEqual({ name: expect.stringMatching(/^eval/) });
    expect(dump(error)).not.toContain(SECRET);
    expect(dump(error)).not.toContain('redis.call');
  });

  it('a plain command refused by the server passes through without its arguments', async () => {
    const error = await runner
      .run((redis) => redis.call('NOSUCHCOMMAND', SECRET))
      .then(
        () => null,
        (rejection: unknown) => rejection,
      );
    expect(error).toMatchObject({ name: 'ReplyError', command: { name: 'NOSUCHCOMMAND' } });
    expect(dump(error)).not.toContain(SECRET);
  });
});

it('classifies operator-side replies (OOM, MISCONF, NOPERM, an ACL refusal inside a script) as faults, other replies as bugs', () => {
  const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
  for (const message of [
    "OOM command not allowed when used memory > 'maxmemory'. script: abc, on @user_script:1.",
    'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
    "NOPERM this user has no permissions to run the 'hset' command",
    "ERR The user executing the script can't run this command or subcommand script: abc, on @user_script:1.",
    'LOADING Redis is loading the dataset in memory',
  ]) {
    expect(isConnectionFault(reply(message)), message).toBe(true);
  }
  expect(isConnectionFault(reply("ERR wrong number of arguments for 'set' command"))).toBe(false);
  expect(isConnectionFault(reply('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
  expect(isConnectionFault(new TypeError('bug'))).toBe(false);
  expect(isParleyError(new Error('x'), ErrorCode.serviceUnavailable)).toBe(false);
});
