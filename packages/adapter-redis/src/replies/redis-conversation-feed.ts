/** @module The conversation feed on Redis pub/sub: live stream signals across every instance. */
import type { ConversationFeed, FeedSignal, FeedSubscription } from '@parley/core';
import { RedisAdapter, RedisRunner, type RedisAdapterOptions, type RedisClient } from '../connection.js';

type Listener = (signal: FeedSignal) => void;

/**
 * {@link ConversationFeed} over Redis pub/sub (standalone or Cluster, where PUBLISH reaches every
 * node's subscribers). One channel per conversation, `P{live}:` + the JSON of `[workspaceId,
 * conversationId]`; this instance subscribes to a channel while at least one of its streams
 * listens to it, on one dedicated connection (a duplicate of the client: a subscribed connection
 * can run nothing else), and unsubscribes when the last one leaves. Publishing uses the shared
 * client under the call deadline. Pub/sub is at-most-once, which the port allows: streams read
 * messages from storage.
 */
export class RedisConversationFeed extends RedisAdapter implements ConversationFeed {
  private subscriber: RedisClient | undefined;
  private subscriberRunner: RedisRunner | undefined;
  private readonly channels = new Map<string, Set<Listener>>();
  /** Channel (un)subscriptions in order, so a quick unsubscribe-then-subscribe cannot reorder. */
  private pending: Promise<unknown> = Promise.resolve();

  /** @throws TypeError for a prefix containing `{` or `}` */
  constructor(options: RedisAdapterOptions) {
    super(options);
  }

  private channel(workspaceId: string, conversationId: string): string {
    return `${this.runner.prefix}{live}:${JSON.stringify([workspaceId, conversationId])}`;
  }

  async publish(workspaceId: string, conversationId: string, signal: FeedSignal): Promise<void> {
    const channel = this.channel(workspaceId, conversationId);
    await this.runner.run((client) => client.publish(channel, JSON.stringify(signal)));
  }

  async subscribe(workspaceId: string, conversationId: string, listener: Listener): Promise<FeedSubscription> {
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
