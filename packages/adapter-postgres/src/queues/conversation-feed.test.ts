/**
 * @module The conversation feed on PostgreSQL and PGlite, with LISTEN/NOTIFY and in its polling
 * mode: signals cross instances to the right conversation only, in order; long deltas are split
 * and arrive whole; unsubscribing stops them.
 */
import type { FeedSignal } from '@parley/core';
import { expect, it } from 'vitest';
import { onEachBackend, openTestSchema, type TestSchema } from '../../test/queues-fixture.js';
import { PostgresConversationFeed } from './postgres-conversation-feed.js';
import { MAX_PAYLOAD_BYTES, splitSignal } from './split-signal.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (done: () => boolean, ms = 3_000) => {
  for (const end = Date.now() + ms; !done() && Date.now() < end; ) await sleep(10);
};

it('splits a long delta at character boundaries into payloads under the NOTIFY limit, and cuts a long error', () => {
  const delta = 'é👋"\\\n'.repeat(3_000) + 'x';
  const payloads = splitSignal({ type: 'message.delta', inReplyTo: 'msg_1', delta, attempt: 2 });
  expect(payloads.length).toBeGreaterThan(2);
  expect(payloads.every((payload) => Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES)).toBe(true);
  const parts = payloads.map((payload) => JSON.parse(payload) as Extract<FeedSignal, { type: 'message.delta' }>);
  expect(parts.map((part) => part.delta).join('')).toBe(delta);
  expect(parts.every((part) => part.attempt === 2 && part.inReplyTo === 'msg_1')).toBe(true);
  const [failed] = splitSignal({ type: 'reply.failed', inReplyTo: null, error: 'ü'.repeat(10_000) });
  expect(Buffer.byteLength(failed!)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  expect(splitSignal({ type: 'conversation.completed' })).toEqual(['{"type":"conversation.completed"}']);
});

for (const listen of [true, false]) {
  await onEachBackend(`conversation feed ${listen ? 'over LISTEN/NOTIFY' : 'polling its table'}`, (backend) => {
    const feeds = async () => {
      const schema: TestSchema = await openTestSchema(backend());
      const opened: PostgresConversationFeed[] = [];
      const open = () => {
        const feed = new PostgresConversationFeed({ ...schema.open({ listen }), schema: schema.schema, pollMs: 50 });
        opened.push(feed);
        return feed;
      };
      const cleanup = async () => {
        for (const feed of opened) await feed.close();
        await schema.cleanup();
      };
      return { open, cleanup };
    };

    it('delivers a signal published on one instance to that conversation\'s subscribers on another, only, until unsubscribed', async () => {
      const { open, cleanup } = await feeds();
      try {
        const [a, b] = [open(), open()];
        const got: FeedSignal[] = [];
        const other: FeedSignal[] = [];
        const subscription = await b.subscribe('ws1', 'conv_1', (signal) => got.push(signal));
        await b.subscribe('ws2', 'conv_1', (signal) => other.push(signal));
        const delta: FeedSignal = { type: 'message.delta', inReplyTo: 'msg_1', delta: 'héllo 👋 \ud800', attempt: 1 };
        await a.publish('ws1', 'conv_1', delta);
        await a.publish('ws1', 'conv_1', { type: 'message', messageId: 'msg_2' });
        await until(() => got.length >= 2);
        expect(got).toEqual([JSON.parse(JSON.stringify(delta)), { type: 'message', messageId: 'msg_2' }]);
        expect(other).toEqual([]);
        await subscription.unsubscribe();
        await subscription.unsubscribe();
        await a.publish('ws1', 'conv_1', { type: 'conversation.completed' });
        await sleep(200);
        expect(got).toHaveLength(2);
      } finally {
        await cleanup();
      }
    });

    it('delivers a burst in the order published, and a 40 KB delta whole', async () => {
      const { open, cleanup } = await feeds();
      try {
        const [a, b] = [open(), open()];
        const got: FeedSignal[] = [];
        await b.subscribe('ws1', 'conv_burst', (signal) => got.push(signal));
        const sent: FeedSignal[] = Array.from({ length: 150 }, (_, i) => ({ type: 'message.delta', inReplyTo: 'msg_1', delta: `part ${i} `, attempt: 1 }));
        for (const signal of sent) await a.publish('ws1', 'conv_burst', signal);
        await until(() => got.length >= sent.length);
        expect(got).toEqual(sent);
        got.length = 0;
        const long = 'ünïcødé 👋 '.repeat(3_000);
        await a.publish('ws1', 'conv_burst', { type: 'message.delta', inReplyTo: 'msg_2', delta: long, attempt: 1 });
        await a.publish('ws1', 'conv_burst', { type: 'message', messageId: 'msg_3' });
        await until(() => got.at(-1)?.type === 'message');
        const deltas = got.filter((signal): signal is Extract<FeedSignal, { type: 'message.delta' }> => signal.type === 'message.delta');
        expect(deltas.map((signal) => signal.delta).join('')).toBe(long);
        expect(got.at(-1)).toEqual({ type: 'message', messageId: 'msg_3' });
      } finally {
        await cleanup();
      }
    });

    it('a subscription resolved before a publish gets it, even for a second subscriber of the same conversation', async () => {
      const { open, cleanup } = await feeds();
      try {
        const [a, b] = [open(), open()];
        const first: FeedSignal[] = [];
        const second: FeedSignal[] = [];
        const subscriptions = await Promise.all([b.subscribe('ws1', 'conv_x', (s) => first.push(s)), b.subscribe('ws1', 'conv_x', (s) => second.push(s))]);
        await a.publish('ws1', 'conv_x', { type: 'conversation.completed' });
        await until(() => first.length > 0 && second.length > 0);
        expect([first, second]).toEqual([[{ type: 'conversation.completed' }], [{ type: 'conversation.completed' }]]);
        await subscriptions[0]!.unsubscribe();
        await a.publish('ws1', 'conv_x', { type: 'message', messageId: 'msg_9' });
        await until(() => second.length > 1);
        expect(second.at(-1)).toEqual({ type: 'message', messageId: 'msg_9' });
        expect(first).toHaveLength(1);
      } finally {
        await cleanup();
      }
    });
  });
}
