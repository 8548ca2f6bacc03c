/** @module `runConversationFeedContract`: the conversation feed port's contract, run by every feed adapter. */
import type { ConversationFeed, FeedSignal, FeedSubscription } from '../ports/conversation-feed.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from './contract.js';

/** A feed under test, optionally another instance over the same backend, and its cleanup. */
export interface ConversationFeedFixture {
  feed: ConversationFeed;
  /**
   * Another instance over the same backend (another process): signals are published there and
   * received on `feed`. Leave out where one process is the whole backend (the in-process feed):
   * signals are then published on `feed` itself.
   */
  peer?: () => ConversationFeed | Promise<ConversationFeed>;
  cleanup?: () => void | Promise<void>;
}

/** Returns a fresh feed, or a {@link ConversationFeedFixture}. */
export type ConversationFeedFactory = () =>
  ConversationFeed | ConversationFeedFixture | Promise<ConversationFeed | ConversationFeedFixture>;

/** `skip` names opted-out groups (`'conversation feed'`) or tests (`'conversation feed: <title>'`). */
export interface ConversationFeedContractOptions {
  skip?: readonly string[];
}

/** Longest wait for a published signal to arrive, in ms: feeds are asynchronous (pub/sub, NOTIFY, polling). */
const ARRIVAL_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `done()` holds, or after {@link ARRIVAL_MS} (the assertion after it then says what is missing). */
async function until(done: () => boolean): Promise<void> {
  for (const end = Date.now() + ARRIVAL_MS; !done() && Date.now() < end;) await sleep(10);
}

/** A subscription and the signals it has received so far. */
interface Listening {
  got: FeedSignal[];
  subscription: FeedSubscription;
}

async function listen(feed: ConversationFeed, workspaceId: string, conversationId: string): Promise<Listening> {
  const got: FeedSignal[] = [];
  const subscription = await feed.subscribe({ workspaceId }, conversationId, (signal) => got.push(signal));
  return { got, subscription };
}

/** One signal of each kind, as a reply's life produces them. */
const EVERY_KIND: FeedSignal[] = [
  { type: 'message', messageId: 'msg_1' },
  { type: 'message.delta', inReplyTo: 'msg_1', delta: 'héllo 👋 "quoted" \\ \n', attempt: 2 },
  { type: 'message.delta', inReplyTo: null, delta: '', attempt: 1 },
  {
    type: 'tool.call',
    inReplyTo: 'msg_1',
    toolCall: { id: 'call_1', name: 'lookup', arguments: { q: 'ü', n: [1, null] } },
  },
  {
    type: 'reply.requires_action',
    data: {
      conversationId: 'conv_1',
      inReplyTo: 'msg_1',
      toolCalls: [{ id: 'call_2', name: 'approve', arguments: {}, kind: 'client', requiresApproval: true }],
    },
  },
  { type: 'reply.failed', inReplyTo: 'msg_1', error: 'the model provider answered 503' },
  { type: 'reply.cancelled', data: { conversationId: 'conv_1', inReplyTo: null } },
  { type: 'context.trimmed', inReplyTo: 'msg_1', context: { messages: 12, tokens: 6_001, trimmed: 38 } },
  { type: 'conversation.completed' },
];

/**
 * Runs the conversation feed contract against `factory`: signals reach the subscribers of their
 * own conversation (workspace and id) only, in the order published, whole and as sent, from the
 * moment `subscribe` resolves until `unsubscribe` (idempotent) resolves.
 */
export function runConversationFeedContract(
  t: ContractTestApi,
  factory: ConversationFeedFactory,
  options: ConversationFeedContractOptions = {},
): void {
  const open = async (): Promise<OpenedFixture<{ feed: ConversationFeed; publisher: ConversationFeed }>> => {
    const made = await factory();
    const fixture: ConversationFeedFixture = 'publish' in made ? { feed: made } : made;
    const publisher = fixture.peer ? await fixture.peer() : fixture.feed;
    return { subject: { feed: fixture.feed, publisher }, cleanup: async () => fixture.cleanup?.() };
  };

  t.describe('conversation feed contract', () => {
    contractGroup(t, 'conversation feed', open, options.skip ?? [], (test) => {
      test('delivers each kind of signal, as sent, to the subscribers of its conversation only', async (subject) => {
        const { feed, publisher } = subject;
        const own = await listen(feed, 'ws_feed_a', 'conv_1');
        const otherWorkspace = await listen(feed, 'ws_feed_b', 'conv_1');
        const otherConversation = await listen(feed, 'ws_feed_a', 'conv_2');
        for (const signal of EVERY_KIND) await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_1', signal);
        const marker: FeedSignal = { type: 'message', messageId: 'msg_marker' };
        await publisher.publish({ workspaceId: 'ws_feed_b' }, 'conv_1', marker);
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_2', marker);
        await until(
          () =>
            own.got.length >= EVERY_KIND.length && otherWorkspace.got.length > 0 && otherConversation.got.length > 0,
        );
        t.expect(own.got).toEqual(EVERY_KIND);
        t.expect(otherWorkspace.got).toEqual([marker]);
        t.expect(otherConversation.got).toEqual([marker]);
      });

      test('delivers a burst in the order published, and a 40 KB delta whole', async ({ feed, publisher }) => {
        const { got } = await listen(feed, 'ws_feed_a', 'conv_burst');
        const sent: FeedSignal[] = Array.from({ length: 150 }, (_, i) => ({
          type: 'message.delta',
          inReplyTo: 'msg_1',
          delta: `part ${i} `,
          attempt: 1,
        }));
        for (const signal of sent) await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_burst', signal);
        await until(() => got.length >= sent.length);
        t.expect(got).toEqual(sent);
        got.length = 0;
        // A backend may carry a long delta as several (PostgreSQL's NOTIFY payload is under 8 KB):
        // joined in order, the parts are the text.
        const long = 'ünïcødé 👋 '.repeat(3_000);
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_burst', {
          type: 'message.delta',
          inReplyTo: 'msg_2',
          delta: long,
          attempt: 1,
        });
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_burst', { type: 'message', messageId: 'msg_3' });
        await until(() => got.at(-1)?.type === 'message');
        const parts = got.filter((signal) => signal.type === 'message.delta');
        t.expect(parts.map((part) => part.delta).join('')).toBe(long);
        t.expect(parts.every((part) => part.inReplyTo === 'msg_2' && part.attempt === 1)).toBe(true);
        t.expect(got.at(-1)).toEqual({ type: 'message', messageId: 'msg_3' });
      });

      test("each subscriber gets its conversation's signals; unsubscribing one (twice) stops it", async (subject) => {
        const { feed, publisher } = subject;
        const [first, second] = await Promise.all([
          listen(feed, 'ws_feed_a', 'conv_x'),
          listen(feed, 'ws_feed_a', 'conv_x'),
        ]);
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_x', { type: 'conversation.completed' });
        await until(() => first!.got.length > 0 && second!.got.length > 0);
        t.expect([first!.got, second!.got]).toEqual([
          [{ type: 'conversation.completed' }],
          [{ type: 'conversation.completed' }],
        ]);
        await first!.subscription.unsubscribe();
        await first!.subscription.unsubscribe();
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_x', { type: 'message', messageId: 'msg_9' });
        await until(() => second!.got.length > 1);
        t.expect(second!.got.at(-1)).toEqual({ type: 'message', messageId: 'msg_9' });
        t.expect(first!.got).toHaveLength(1);
        await second!.subscription.unsubscribe();
        // Nobody listens now: publishing still resolves. Whether a later subscriber sees that signal
        // is not promised either way (streams re-read storage), only that it sees what follows.
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_x', { type: 'message', messageId: 'msg_10' });
        const late = await listen(feed, 'ws_feed_a', 'conv_x');
        await publisher.publish({ workspaceId: 'ws_feed_a' }, 'conv_x', { type: 'message', messageId: 'msg_11' });
        await until(
          () =>
            late.got.at(-1)?.type === 'message' && (late.got.at(-1) as { messageId: string }).messageId === 'msg_11',
        );
        t.expect(late.got.at(-1)).toEqual({ type: 'message', messageId: 'msg_11' });
        t.expect(second!.got).toHaveLength(2);
      });
    });
  });
}
