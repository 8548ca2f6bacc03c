/** @module The conversation feed within this process: live signals to the streams this process holds. */
import type { ConversationFeed, FeedSignal, FeedSubscription } from '../ports/conversation-feed.js';
import type { WorkspaceScope } from '../ports/scope.js';

type Listener = (signal: FeedSignal) => void;

/**
 * {@link ConversationFeed} for one process (memory storage, tests, and `createCore`'s default):
 * signals reach the listeners subscribed in this process only. A listener that throws does not
 * stop the others. Several instances sharing Redis need the Redis feed instead.
 */
export class InProcessConversationFeed implements ConversationFeed {
  private readonly listeners = new Map<string, Set<Listener>>();

  async publish({ workspaceId }: WorkspaceScope, conversationId: string, signal: FeedSignal): Promise<void> {
    const listeners = this.listeners.get(keyOf(workspaceId, conversationId));
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(structuredClone(signal));
      } catch {
        // One stream's failure is its own; the others still get the signal.
      }
    }
  }

  async subscribe(
    { workspaceId }: WorkspaceScope,
    conversationId: string,
    listener: Listener,
  ): Promise<FeedSubscription> {
    const key = keyOf(workspaceId, conversationId);
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    // A wrapper per subscription, so subscribing one function twice is two subscriptions.
    const own: Listener = (signal) => listener(signal);
    set.add(own);
    return {
      unsubscribe: async () => {
        const current = this.listeners.get(key);
        if (!current?.delete(own)) return;
        if (current.size === 0) this.listeners.delete(key);
      },
    };
  }

  /** Live subscriptions, across conversations (a stream that ended must leave none behind). */
  get subscriptionCount(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }
}

function keyOf(workspaceId: string, conversationId: string): string {
  return `${workspaceId}\u0000${conversationId}`;
}
