/**
 * @module Test support: core's reply queue contract and the conversation feed on Redis, over a
 * client a test file provides (standalone or Cluster). Each instance gets a client of its own
 * (`duplicate()`), as separate processes would, under a fresh key prefix deleted afterwards.
 */
import { runConversationFeedContract, runReplyQueueContract } from '@parley/core/testing';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connection.js';
import { RedisConversationFeed } from '../src/replies/redis-conversation-feed.js';
import { RedisReplyQueue } from '../src/replies/redis-reply-queue.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

/** Registers the reply queue and conversation feed contracts and the feed's own tests; `client()` is called inside tests. */
export function runRedisReplyTests(client: () => RedisClient, label: string): void {
  runReplyQueueContract({ describe, it, expect }, ({ leaseMs }) => {
    const prefix = uniquePrefix(`${label}-rq`);
    const opened: Array<{ queue: RedisReplyQueue; connection: RedisClient }> = [];
    const open = () => {
      const connection = client().duplicate();
      connection.on('error', () => {});
      const queue = new RedisReplyQueue({ client: connection, prefix, leaseMs, pollMs: 20 });
      opened.push({ queue, connection });
      return queue;
    };
    return {
      queue: open(),
      peer: open,
      cleanup: async () => {
        for (const { queue, connection } of opened) {
          await queue.close();
          connection.disconnect();
        }
        await deletePrefix(client(), prefix);
      },
    };
  });

  describe('RedisReplyQueue', () => {
    it('serves requests queued by Parley 0.1 (jobs without a model) to any claim, in order', async () => {
      const prefix = uniquePrefix(`${label}-rq-legacy`);
      const redis = client();
      const queue = new RedisReplyQueue({ client: redis, prefix, pollMs: 20 });
      try {
        const base = `${prefix}{replies}:`;
        const jobs = [1, 2, 3].map((n) => {
          const conversationId = n === 3 ? 'b' : 'a';
          return { id: `rpl_${n}`, workspaceId: 'ws', conversationId, inReplyTo: null, requestedAt: 1_000 + n };
        });
        const member = (conversation: string) => JSON.stringify(['ws', conversation]);
        const entry = (job: (typeof jobs)[number]) => `${job.requestedAt}|${JSON.stringify(job)}`;
        for (const job of jobs) await redis.rpush(`${base}fifo:${member(job.conversationId)}`, entry(job));
        await redis.hset(`${base}heads`, member('a'), entry(jobs[0]!), member('b'), entry(jobs[2]!));
        await redis.zadd(`${base}ready`, jobs[0]!.requestedAt, member('a'), jobs[2]!.requestedAt, member('b'));
        await redis.set(`${base}count`, 3);
        const claim = { models: ['anything'] };
        const first = await queue.lease(0, claim);
        const second = await queue.lease(0, claim);
        expect([first?.job, second?.job]).toEqual([
          { ...jobs[0], model: '' },
          { ...jobs[2], model: '' },
        ]);
        expect(await queue.lease(0, claim)).toBeNull();
        expect(await queue.ack(first!)).toBe(true);
        expect((await queue.lease(0, claim))?.job).toEqual({ ...jobs[1], model: '' });
        expect(await queue.size()).toBe(2);
      } finally {
        await queue.close();
        await deletePrefix(redis, prefix);
      }
    });
  });

  const feeds = () => {
    const prefix = uniquePrefix(`${label}-feed`);
    const opened: RedisConversationFeed[] = [];
    const connections: RedisClient[] = [];
    const open = () => {
      const connection = client().duplicate();
      connection.on('error', () => {});
      connections.push(connection);
      const feed = new RedisConversationFeed({ client: connection, prefix });
      opened.push(feed);
      return feed;
    };
    const cleanup = async () => {
      for (const feed of opened) await feed.close();
      connections.forEach((connection) => connection.disconnect());
    };
    return { open, cleanup, prefix };
  };

  // Each feed has a connection of its own, as separate processes would.
  runConversationFeedContract({ describe, it, expect }, () => {
    const { open, cleanup } = feeds();
    return { feed: open(), peer: open, cleanup };
  });

  describe('RedisConversationFeed', () => {
    it('holds a channel while any stream listens and leaves none behind (PUBSUB NUMSUB 0)', async () => {
      const { open, cleanup, prefix } = feeds();
      try {
        const feed = open();
        const subscriptions = await Promise.all(
          [1, 2, 3].map(() => feed.subscribe({ workspaceId: 'ws1' }, 'conv_x', () => {})),
        );
        expect(feed.channelCount).toBe(1);
        const channel = `${prefix}{live}:${JSON.stringify(['ws1', 'conv_x'])}`;
        // PUBSUB NUMSUB counts one node's subscribers: on a Cluster, sum every node's.
        const nodes = () => {
          const each = client();
          return each instanceof Cluster ? each.nodes('all') : [each];
        };
        const numsub = async () => {
          let total = 0;
          for (const node of nodes()) total += Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1]);
          return total;
        };
        expect(await numsub()).toBe(1);
        await subscriptions[0]!.unsubscribe();
        await subscriptions[1]!.unsubscribe();
        expect(feed.channelCount).toBe(1);
        await subscriptions[2]!.unsubscribe();
        await subscriptions[2]!.unsubscribe();
        expect(feed.channelCount).toBe(0);
        expect(await numsub()).toBe(0);
      } finally {
        await cleanup();
      }
    });
  });
}
