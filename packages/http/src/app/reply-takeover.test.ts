/**
 * @module On Redis, a reply worker that dies mid-reply loses nothing: its lease ends and a worker of
 * another process (its own Redis connection) makes the reply, once.
 */
import { memoryAdapters, MemoryStorage } from '@parley/adapter-memory';
import { RedisReplyQueue } from '@parley/adapter-redis';
import { createCore, ReplyWorker, type ReplyOutcome } from '@parley/core';
import { eventually, scriptedModel } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';

const describeRedis = describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis());

describeRedis('reply takeover on Redis', () => {
  let client: Redis;
  const prefix = uniquePrefix('reply-takeover');
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deletePrefix(client, prefix);
    await client.quit();
  });

  it('a worker that stops renewing its lease mid-reply is taken over; one reply is stored', async () => {
    const storage = new MemoryStorage();
    // Long enough that a loaded machine's stalls do not end worker A's lease while it still beats
    // (a second request to the hanging model); worker B takes over within one lease of the "death".
    const leaseMs = 2_000;
    // Two "processes": each its own Redis connection and core; storage is shared as Redis would be.
    const connections = [client.duplicate(), client.duplicate()];
    const [queueA, queueB] = connections.map(
      (connection) => new RedisReplyQueue({ client: connection, prefix, leaseMs, pollMs: 20 }),
    ) as [RedisReplyQueue, RedisReplyQueue];
    const hanging = scriptedModel([{ deltas: ['never'], hold: new Promise(() => {}) }]);
    const answering = scriptedModel([{ deltas: ['taken', ' over'] }]);
    const common = { ...memoryAdapters(), storage };
    const coreA = createCore({ ...common, replyQueue: queueA }, { models: { m: hanging } });
    const coreB = createCore({ ...common, replyQueue: queueB }, { models: { m: answering } });
    const agent = await coreA.agents.create(
      { workspaceId: 'ws1' },
      { name: 'A', description: '', model: 'm', autoReply: false },
    );
    const conversation = await coreA.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    const user = await coreA.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'user',
      content: 'hi',
    });
    await coreA.replies.request({ workspaceId: 'ws1' }, conversation.id);

    const outcomes: ReplyOutcome[] = [];
    const workerA = new ReplyWorker({
      replies: coreA.replies,
      queue: queueA,
      heartbeatMs: 100,
      pollMs: 20,
      drainMs: 50,
    });
    workerA.start();
    await eventually(() => hanging.requests.length > 0, 15_000, 'worker A calling the model');
    expect(hanging.requests).toHaveLength(1);
    // Worker A's process "dies": its connection is gone, so its lease is never renewed again.
    connections[0]!.disconnect();
    const workerB = new ReplyWorker({
      replies: coreB.replies,
      queue: queueB,
      heartbeatMs: 100,
      pollMs: 20,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    workerB.start();
    await eventually(() => outcomes.length > 0, 15_000, 'worker B making the reply');
    await workerB.stop();
    await workerA.stop();
    expect(outcomes).toEqual(['stored']);
    const history = await coreB.conversations.history({ workspaceId: 'ws1' }, conversation.id);
    expect(history.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'taken over'],
    ]);
    expect(history.messages[1]?.metadata).toMatchObject({ reply: { inReplyTo: user.id } });
    expect(await queueB.size()).toBe(0);
    connections[1]!.disconnect();
  });
});
