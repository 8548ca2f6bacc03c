/** @module The one path a message takes into a conversation: stored with its event, then signalled to live streams. */
import { inject, injectable } from '../di.js';
import type { Clock } from '../ports/clock.js';
import type { ConversationFeed, FeedSignal } from '../ports/conversation-feed.js';
import type { IdGenerator } from '../ports/ids.js';
import type { WorkspaceScope } from '../ports/scope.js';
import type { Storage, UsageRecord } from '../ports/storage.js';
import { TOKENS } from '../tokens.js';
import type { Message } from '../types.js';
import { domainEvent } from './domain-events.js';

/** What became of an append: the storage port's answer (docs/events-and-webhooks.md). */
export type AppendOutcome = Awaited<ReturnType<Storage['messages']['append']>>;

/**
 * Appends messages for every service that stores one (a caller's message, an agent's reply): the
 * message and its event — `message.received` for role `assistant`, `message.sent` otherwise — in
 * one atomic storage step, then a best-effort `message` signal to the conversation's streams
 * (streams re-read storage, so a lost signal never loses a message).
 */
@injectable()
export class MessageWriter {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.conversationFeed) private readonly feed: ConversationFeed,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
  ) {}

  /**
   * Stores `message` with its event (and a reply step's `usage`, counted in the same step); signals
   * its streams when it was appended. Faults of storage reject; so does a refused rate limit of
   * `scope` (ParleyError `rate_limit_exceeded`, nothing stored).
   */
  async append(scope: WorkspaceScope, message: Message, options: { usage?: UsageRecord } = {}): Promise<AppendOutcome> {
    const type = message.role === 'assistant' ? 'message.received' : 'message.sent';
    const event = domainEvent(this.ids, this.clock, scope.workspaceId, type, message);
    const outcome = await this.storage.messages.append(scope, message, { event, ...options });
    if (outcome === 'appended')
      await this.signal(scope, message.conversationId, { type: 'message', messageId: message.id });
    return outcome;
  }

  /** Sends a live signal; never rejects: a feed outage must not turn a stored write into an error. */
  async signal(scope: WorkspaceScope, conversationId: string, signal: FeedSignal): Promise<void> {
    try {
      await this.feed.publish(scope, conversationId, signal);
    } catch {
      // Nothing to do: streams read what was stored from storage.
    }
  }
}
