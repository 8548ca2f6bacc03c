/**
 * @module One storage read for many live streams: when a message reaches a conversation that 1 000
 * streams follow, each reads on from the same message after the same signal, and without sharing
 * that is 1 000 identical history pages queued at once on the store's connections (on PostgreSQL a
 * pool of ten, whose check-out gives up after a second).
 */
import type { MessagePage, Storage } from '../ports/storage.js';
import type { WorkspaceScope } from '../ports/scope.js';

/** A history page query of a live stream: after a message, or the latest `limit`. */
export interface StreamPageQuery {
  after?: string;
  limit: number;
}

/**
 * Shares concurrent identical history reads among the streams of one core — without ever handing a
 * stream a read that started before what it is waiting for was committed. Every read started gets
 * the next number; a stream takes a {@link mark} when it learns of a change (a feed signal, the
 * subscription itself, an idle re-check), and {@link page} gives it a read in flight only when
 * that read's number is above the mark: it started after the change was signalled, and a signal
 * is sent only after the change it tells of was committed, so the read sees it.
 */
export class SharedPageReads {
  private started = 0;
  private readonly inFlight = new Map<string, { number: number; page: Promise<MessagePage | null> }>();

  constructor(private readonly storage: Storage) {}

  /** The current mark: any read {@link page} starts or shares from now on starts after this moment. */
  mark(): number {
    return this.started;
  }

  /**
   * `storage.messages.page(scope, conversationId, query)`, from a read started after `mark`:
   * the same identical read in flight when it started after `mark`, else a new one.
   * @throws what the storage read throws (to every stream sharing it)
   */
  page(
    scope: WorkspaceScope,
    conversationId: string,
    query: StreamPageQuery,
    mark: number,
  ): Promise<MessagePage | null> {
    const key = `${scope.workspaceId}\u0000${conversationId}\u0000${query.after ?? ''}\u0000${query.limit}`;
    const current = this.inFlight.get(key);
    if (current && current.number > mark) return current.page;
    const entry = { number: ++this.started, page: this.storage.messages.page(scope, conversationId, query) };
    this.inFlight.set(key, entry);
    const settled = () => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
    entry.page.then(settled, settled);
    return entry.page;
  }
}
