/**
 * @module RedisMessageStore's commands, counted on a private redis-server (whose `INFO
 * commandstats` no other test shares): the appends one workspace receives in the same turn are
 * written by one script, which reads and writes each conversation once and records the events
 * with one command each; and what such a script does when the rate-limit state cannot be read or
 * written (an ACL refusal, as `NOPERM` or `OOM` would be).
 */
import { Admission, RateLimiter, type Principal } from '@parley/core';
import { ManualClock, Records } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeIfAvailable, privateRedisServer, probeRedisBinaries } from '../../test/redis-available.js';
import { redisAdapters } from '../redis-adapters.js';
import { RedisStorage } from '../redis-storage.js';

const describeServer = describeIfAvailable('A private redis-server', await probeRedisBinaries());

describeServer('RedisMessageStore: commands run', () => {
  const redis = privateRedisServer('message-commands');
  let storage: RedisStorage;
  beforeAll(() => void (storage = new RedisStorage({ url: redis.url, prefix: 'commands:' })));
  afterAll(() => storage?.close());

  const counted = ['evalsha', 'hget', 'hset', 'zadd', 'incrby', 'rpush'] as const;
  const calls = async () =>
    Object.fromEntries(
      await Promise.all(counted.map(async (command) => [command, await redis.calls(command)] as const)),
    );

  it('writes the appends one workspace receives in the same turn with one script, each conversation read and written once', async () => {
    const records = new Records();
    const agent = await records.insertAgent(storage, 'ws');
    const [first, second] = [
      await records.insertConversation(storage, 'ws', agent.id),
      await records.insertConversation(storage, 'ws', agent.id),
    ];
    const other = await records.insertConversation(storage, 'other', (await records.insertAgent(storage, 'other')).id);
    await records.appendMessages(storage, 'ws', first.id, 1); // the script is loaded, the workspaces registered
    await records.appendMessages(storage, 'other', other.id, 1);

    const before = await calls();
    const targets = [first.id, second.id, first.id, first.id, second.id];
    const messages = targets.map((conversationId) => records.message(conversationId));
    const elsewhere = records.message(other.id);
    const outcomes = await Promise.all([
      ...messages.map((message) =>
        storage.messages.append({ workspaceId: 'ws' }, message, { event: records.sent('ws', message) }),
      ),
      storage.messages.append({ workspaceId: 'other' }, elsewhere, { event: records.sent('other', elsewhere) }),
    ]);
    const after = await calls();

    expect(outcomes).toEqual(Array(6).fill('appended'));
    const ran = Object.fromEntries(counted.map((command) => [command, after[command]! - before[command]!]));
    // Per workspace: one script, one INCRBY and one RPUSH; per conversation one HGET. The HSETs:
    // per conversation its history, per workspace its conversations and its events; the ZADDs: per
    // conversation its history, per workspace its log and its one type index.
    expect(ran).toEqual({ evalsha: 2, hget: 3, hset: 3 + 2 + 2, zadd: 3 + 2 + 2, incrby: 2, rpush: 2 });
    expect((await storage.messages.page({ workspaceId: 'ws' }, first.id, { limit: 10 }))!.messages.slice(1)).toEqual([
      messages[0],
      messages[2],
      messages[3],
    ]);
    expect((await storage.messages.page({ workspaceId: 'ws' }, second.id, { limit: 10 }))!.messages).toEqual([
      messages[1],
      messages[4],
    ]);
  });

  /**
   * Appends made at once through a connection of an ACL user who may not run GET (`state:
   * 'read'`) or SET (`state: 'write'`) — the commands of the rate-limit state and of nothing else
   * an append runs — each with an admission under `failure`.
   */
  async function appendWithout(state: 'read' | 'write', failure: 'open' | 'closed') {
    const user = `no-${state}-${failure}`;
    await redis.admin.call(
      'ACL',
      'SETUSER',
      user,
      'on',
      `>${user}`,
      '~*',
      '&*',
      '+@all',
      state === 'read' ? '-get' : '-set',
    );
    const client = new Redis(redis.url, { username: user, password: user });
    const adapters = redisAdapters({ client, prefix: `${user}:` });
    const limiter = new RateLimiter(adapters.rateLimits, new ManualClock(1_800_000_000_000), {
      failure,
      onStoreError: () => {},
    });
    const principal: Principal = {
      keyId: 'key',
      workspaceId: 'ws',
      plan: 'enterprise',
      scopes: ['*'],
      limitPerHour: 100,
    };
    const records = new Records();
    const { storage } = adapters;
    const conversation = await records.insertConversation(storage, 'ws', (await records.insertAgent(storage, 'ws')).id);
    const messages = [records.message(conversation.id), records.message(conversation.id)];
    const admissions = messages.map(() => new Admission(limiter, principal));
    const outcomes = await Promise.allSettled(
      messages.map((message, index) =>
        storage.messages.append({ workspaceId: 'ws', admission: admissions[index] }, message, {
          event: records.sent('ws', message),
        }),
      ),
    );
    const stored = (await storage.messages.page({ workspaceId: 'ws' }, conversation.id, { limit: 10 }))!.messages;
    const results = await Promise.all(admissions.map((admission) => admission.result()));
    client.disconnect();
    return { outcomes, stored, messages, failures: results.map((result) => result.failure) };
  }

  for (const state of ['read', 'write'] as const) {
    it(`appends made at once when the rate-limit state cannot be ${state === 'read' ? 'read' : 'written'}: open, they are stored; closed, nothing is`, async () => {
      const open = await appendWithout(state, 'open');
      expect(open.outcomes).toEqual([
        { status: 'fulfilled', value: 'appended' },
        { status: 'fulfilled', value: 'appended' },
      ]);
      expect(open.stored).toEqual(open.messages);
      expect(open.failures).toEqual(['open', 'open']);

      const closed = await appendWithout(state, 'closed');
      expect(closed.outcomes).toEqual([
        { status: 'rejected', reason: expect.objectContaining({ code: 'service_unavailable' }) },
        { status: 'rejected', reason: expect.objectContaining({ code: 'service_unavailable' }) },
      ]);
      expect(closed.stored).toEqual([]);
      expect(closed.failures).toEqual(['closed', 'closed']);
    });
  }
});
