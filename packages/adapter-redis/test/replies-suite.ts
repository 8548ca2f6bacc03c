/**
 * @module Test support: core's reply queue contract and the conversation feed on Redis, over a
 * client a test file provides (standalone or Cluster). Each instance gets a client of its own
 * (`duplicate()`), as separate processes would, under a fresh key prefix deleted afterwards.
 */
import type { FeedSignal } from '@parley/core';
import { runReplyQueueContract } from '@parley/core/testing';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connection.js';
import { RedisConversationFeed } from '../src/replies/redis-conversation-feed.js';
import { RedisReplyQueue } from '../src/replies/redis-reply-queue.js';
import { deletePrefix, uniquePrefix } from './redis-available.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers the reply queue contract (every group) and the feed tests; `client()` is called inside tests. */
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

  describe('RedisConversationFeed', () => {
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

    it('delivers a signal published on one instance to the subscribers of that conversation on another, only', async () => {
      const { open, cleanup } = feeds();
      try {
        const [a, b] = [open(), open()];
        const got: FeedSignal[] = [];
        const other: FeedSignal[] = [];
        const subscription = await b.subscribe('ws1', 'conv_1', (signal) => got.push(signal));
        await b.subscribe('ws2', 'conv_1', (signal) => other.push(signal));
        const delta: FeedSignal = { type: 'message.delta', inReplyTo: 'msg_1', delta: 'héllo 👋', attempt: 1 };
        await a.publish('ws1', 'conv_1', delta);
        await a.publish('ws1', 'conv_1', { type: 'message', messageId: 'msg_2' });
        for (let i = 0; i < 100 && got.length < 2; i += 1) await sleep(10);
        expect(got).toEqual([delta, { type: 'message', messageId: 'msg_2' }]);
        expect(other).toEqual([]);
        await subscription.unsubscribe();
        await a.publish('ws1', 'conv_1', { type: 'conversation.completed' });
        await sleep(100);
        expect(got).toHaveLength(2);
      } finally {
        await cleanup();
      }
    });

    it('delivers a burst of signals in the order published, though publish does not wait for Redis', async () => {
      const { open, cleanup } = feeds();
      try {
        const [a, b] = [open(), open()];
        const got: FeedSignal[] = [];
        await b.subscribe('ws1', 'conv_burst', (signal) => got.push(signal));
        const sent: FeedSignal[] = Array.from({ length: 200 }, (_, i) => ({ type: 'message.delta', inReplyTo: 'msg_1', delta: `part ${i}`, attempt: 1 }));
        // As a reply's deltas are published: one after another, each call awaited.
        for (const signal of sent) await a.publish('ws1', 'conv_burst', signal);
        for (let i = 0; i < 300 && got.length < sent.length; i += 1) await sleep(10);
        expect(got).toEqual(sent);
      } finally {
        await cleanup();
      }
    });

    it('holds a channel while any stream listens and leaves none behind (PUBSUB NUMSUB 0)', async () => {
      const { open, cleanup, prefix } = feeds();
      try {
        const feed = open();
        const subscriptions = await Promise.all([1, 2, 3].map(() => feed.subscribe('ws1', 'conv_x', () => {})));
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
