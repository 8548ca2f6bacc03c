/**
 * @module The conversation feed on PostgreSQL and PGlite, with LISTEN/NOTIFY and in its polling
 * mode, against core's feed contract; and how a long signal is split under the NOTIFY limit.
 */
import type { FeedSignal } from '@parley/core/adapter';
import { runConversationFeedContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { onEachBackend, openTestSchema, type TestSchema } from '../../test/queues-fixture.js';
import { PostgresConversationFeed } from './postgres-conversation-feed.js';
import { MAX_PAYLOAD_BYTES, splitSignal } from './split-signal.js';

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
    // Each feed its own "process" over one schema: signals cross instances as between servers.
    runConversationFeedContract({ describe, it, expect }, async () => {
      const schema: TestSchema = await openTestSchema(backend());
      const opened: PostgresConversationFeed[] = [];
      const open = () => {
        const feed = new PostgresConversationFeed({ ...schema.open({ listen }), schema: schema.schema, pollMs: 50 });
        opened.push(feed);
        return feed;
      };
      return {
        feed: open(),
        peer: open,
        cleanup: async () => {
          for (const feed of opened) await feed.close();
          await schema.cleanup();
        },
      };
    });
  });
}
