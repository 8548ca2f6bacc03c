/** @module The conversation feed on Redis pub/sub: live stream signals across every instance. */
import type { ConversationFeed, FeedSignal, FeedSubscription, WorkspaceScope } from '@parley/core/adapter';
import { Cluster } from 'ioredis';
import { RedisAdapter, RedisRunner, type RedisAdapterOptions, type RedisClient } from '../connection.js';
import { namedScript, runScript } from '../script.js';

type Listener = (signal: FeedSignal) => void;

/**
 * PUBLISH with the channel named as a key, so ioredis sends it to the node owning the channel's
 * slot (every channel carries the `{live}` hash tag): on a Cluster, all signals leave from one node.
 */
const FEED_PUBLISH = namedScript({
  name: 'feed_publish',
  keys: ['channel'],
  args: ['text'],
  lua: `return redis.call('PUBLISH', channel, text)`,
});

/** A deadline (Redis server time, ms) no script reaches: the year 275 760. */
const NO_DEADLINE = 8.64e15;

/** How many signals of one conversation may wait for the replies of earlier ones before more are dropped. */
const MAX_UNANSWERED_SIGNALS = 1_000;

/**
 * {@link ConversationFeed} over Redis pub/sub (standalone or Cluster, where PUBLISH reaches every
 * node's subscribers). One channel per conversation, `P{live}:` + the JSON of `[workspaceId,
 * conversationId]`; this instance subscribes to a channel while at least one of its streams
 * listens to it, on one dedicated connection (a duplicate of the client: a subscribed connection
 * can run nothing else), and unsubscribes when the last one leaves. Publishing uses the shared
 * client under the call deadline, and callers do not wait for the reply (see {@link publish}).
 * Pub/sub is at-most-once, which the port allows: streams read messages from storage.
 */
export class RedisConversationFeed extends RedisAdapter implements ConversationFeed {
  private subscriber: RedisClient | undefined;
  private subscriberRunner: RedisRunner | undefined;
  private readonly channels = new Map<string, Set<Listener>>();
  /** Per channel: how many published signals wait for their reply, and the last one's. */
  private readonly outgoing = new Map<string, { last: Promise<unknown>; waiting: number }>();
  /** Channel (un)subscriptions in order, so a quick unsubscribe-then-subscribe cannot reorder. */
  private pending: Promise<unknown> = Promise.resolve();

  /** @throws TypeError for a prefix containing `{` or `}` */
  constructor(options: RedisAdapterOptions) {
    super(options);
  }

  private channel(workspaceId: string, conversationId: string): string {
    return `${this.runner.prefix}{live}:${JSON.stringify([workspaceId, conversationId])}`;
  }

  /**
   * Hands `signal` over without waiting for Redis's reply (which only counts receivers), so a
   * write that signals costs its caller no extra round trip. A conversation's signals reach its
   * subscribers in the order published: each is sent once the one before it was answered (a
   * connection still being opened may reorder what is sent on it meanwhile), and on a Cluster every
   * PUBLISH goes to the node owning the channels' slot ({@link FEED_PUBLISH}) — a plain PUBLISH
   * goes to any node, and two nodes' forwards can overtake each other. Past
   * {@link MAX_UNANSWERED_SIGNALS} signals of one conversation waiting, more are dropped (the feed
   * is at-most-once). While the client is not connected, waits as every call does and rejects
   * with ParleyError `service_unavailable` after the deadline.
   */
  async publish({ workspaceId }: WorkspaceScope, conversationId: string, signal: FeedSignal): Promise<void> {
    const channel = this.channel(workspaceId, conversationId);
    const text = JSON.stringify(signal);
    const send = () =>
      this.runner.run((client) =>
        // A signal published late is harmless (a hint), so the script has no deadline to keep.
        client instanceof Cluster
          ? runScript(client, FEED_PUBLISH, { keys: { channel }, args: { text } }, NO_DEADLINE)
          : client.publish(channel, text),
      );
    const queued = this.outgoing.get(channel);
    if (!queued && this.client.status !== 'ready') {
      await send();
      return;
    }
    if (queued && queued.waiting >= MAX_UNANSWERED_SIGNALS) return;
    const entry = queued ?? { last: Promise.resolve(), waiting: 0 };
    const answered = () => {
      entry.waiting -= 1;
      if (entry.waiting === 0 && this.outgoing.get(channel) === entry) this.outgoing.delete(channel);
    };
    entry.waiting += 1;
    entry.last = (queued ? queued.last.then(send) : send()).then(answered, answered);
    this.outgoing.set(channel, entry);
  }

  async subscribe(
    { workspaceId }: WorkspaceScope,
    conversationId: string,
    listener: Listener,
  ): Promise<FeedSubscription> {
    const channel = this.channel(workspaceId, conversationId);
    const own: Listener = (signal) => listener(signal);
    let listeners = this.channels.get(channel);
    if (!listeners) {
      this.channels.set(channel, (listeners = new Set()));
      listeners.add(own);
      try {
        await this.serially((runner) => runner.run((client) => client.subscribe(channel)));
      } catch (error) {
        listeners.delete(own);
        if (listeners.size === 0 && this.channels.get(channel) === listeners) this.channels.delete(channel);
        throw error;
      }
    } else {
      listeners.add(own);
      // Another stream asked for this channel: wait until that subscription is live too.
      await this.pending.catch(() => {});
    }
    let done = false;
    return {
      unsubscribe: async () => {
        if (done) return;
        done = true;
        const current = this.channels.get(channel);
        if (!current?.delete(own) || current.size > 0) return;
        this.channels.delete(channel);
        await this.serially((runner) => runner.run((client) => client.unsubscribe(channel))).catch(() => {
          // A dead connection holds no subscription; ioredis resubscribes only what is still listened to.
        });
      },
    };
  }

  /** Channels this instance is subscribed to (a stream that ended must leave none behind). */
  get channelCount(): number {
    return this.channels.size;
  }

  /** Closes the subscriber connection, then the client if this feed created it. */
  override async close(): Promise<void> {
    this.channels.clear();
    this.subscriber?.disconnect();
    await super.close();
  }

  private serially<T>(op: (runner: RedisRunner) => Promise<T>): Promise<T> {
    const run = this.pending.catch(() => {}).then(() => op(this.subscriberRunnerOf()));
    this.pending = run;
    return run;
  }

  private subscriberRunnerOf(): RedisRunner {
    if (!this.subscriber || !this.subscriberRunner) {
      const subscriber = this.client.duplicate();
      subscriber.on('error', () => {});
      subscriber.on('message', (channel: string, text: string) => this.dispatch(channel, text));
      this.subscriber = subscriber;
      this.subscriberRunner = new RedisRunner(subscriber, this.runner.timeoutMs, this.runner.prefix);
    }
    return this.subscriberRunner;
  }

  private dispatch(channel: string, text: string): void {
    const listeners = this.channels.get(channel);
    if (!listeners) return;
    let signal: FeedSignal;
    try {
      signal = JSON.parse(text) as FeedSignal;
    } catch {
      return;
    }
    for (const listener of [...listeners]) {
      try {
        listener(structuredClone(signal));
      } catch {
        // One stream's failure is its own.
      }
    }
  }
}
