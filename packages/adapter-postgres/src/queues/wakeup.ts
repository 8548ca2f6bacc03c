/**
 * @module Wake-ups of waiting `lease` calls: a notification (or a reconnect, or close) ends a wait
 * early, a timer ends it at the latest, so a lost notification costs at most one poll interval.
 */
import type { Notifier, Unlisten } from './notifier.js';

/** The longest a waiting lease sleeps between looks: the brief's "a lost notification delays a job by at most 1 s". */
export const MAX_POLL_MS = 1_000;

/** @throws RangeError for a poll interval that is not an integer from 1 to {@link MAX_POLL_MS}. */
export function checkPollMs(pollMs: number): number {
  if (!Number.isSafeInteger(pollMs) || pollMs < 1 || pollMs > MAX_POLL_MS) {
    throw new RangeError(`pollMs must be an integer from 1 to ${MAX_POLL_MS}, got ${pollMs}`);
  }
  return pollMs;
}

/**
 * Counts wake-ups per topic (a queue lane, say). A caller reads `generation(topic)` before it
 * looks for work and, finding none, `wait`s with it: a wake-up that came in between ends the wait
 * at once, so none falls between the look and the wait.
 */
export class Wakeups {
  private readonly generations = new Map<string, number>();
  private readonly waiters = new Set<{ topic: string; since: number; done: () => void }>();
  private listening: Promise<void> | undefined;
  private unlisten: Unlisten | undefined;
  private closed = false;

  /**
   * `notifier` (none: poll only) carries the wake-ups on `channel`; a payload names the topic
   * woken. A reconnect wakes every topic, since notifications may have been lost meanwhile.
   */
  constructor(
    private readonly notifier: Notifier | null,
    private readonly channel: string,
  ) {
    notifier?.onReconnect(() => this.wakeAll());
  }

  /**
   * Resolves once this process LISTENs on the channel (the first call starts it), or after
   * `timeoutMs`. A failure to LISTEN is not an error here: waits then end by their timers
   * (polling), and the next call tries again.
   */
  async ready(timeoutMs: number): Promise<void> {
    if (!this.notifier || this.unlisten || this.closed) return;
    this.listening ??= this.notifier
      .listen(this.channel, (topic) => this.wake(topic))
      .then((unlisten) => {
        if (this.closed) void unlisten();
        else this.unlisten = unlisten;
      })
      .catch(() => {
        this.listening = undefined;
      });
    // A database that does not answer must not hold the caller longer than one poll.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.listening, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  generation(topic: string): number {
    return this.generations.get(topic) ?? 0;
  }

  /** Wakes the waits on `topic` in this process (what a notification does). */
  wake(topic: string): void {
    this.generations.set(topic, this.generation(topic) + 1);
    for (const waiter of [...this.waiters]) if (waiter.topic === topic) waiter.done();
  }

  /** Resolves after `ms`, or earlier once `topic` was woken after `since` (or on close). */
  wait(topic: string, since: number, ms: number): Promise<void> {
    if (this.closed || this.generation(topic) !== since) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = {
        topic,
        since,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, Math.max(0, ms));
      this.waiters.add(waiter);
    });
  }

  /** Ends every wait and stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter.done();
    await this.listening;
    await this.unlisten?.();
  }

  private wakeAll(): void {
    for (const topic of new Set([...this.generations.keys(), ...[...this.waiters].map((waiter) => waiter.topic)]))
      this.wake(topic);
  }
}
