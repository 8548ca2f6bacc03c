/**
 * @module Group commit for one kind of statement: what callers ask for while one statement is in
 * flight goes out together in the next one.
 */
import { atTurnEnd } from '@parley/core/adapter';

interface Pending<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Sends the items of concurrent calls to `run` in batches, one batch in flight at a time. An item
 * added while nothing is in flight is sent at the end of the event loop's current turn
 * (core's `atTurnEnd`: after every request whose bytes arrived in that turn), with every item added in
 * that turn; items added while a batch is in flight wait for it and then go together, at most
 * `maxBatch` at a time. Under load a call therefore costs a fraction of a round trip; an idle
 * process adds no delay but one turn.
 *
 * `run` gets the items in the order they were added and must resolve to one result per item, in
 * the same order; when it rejects, every call of that batch rejects with its error. When
 * `failsWaiting(error)` holds for that error (the database cannot serve), the calls waiting for
 * the next batch reject with it too, instead of waiting for a statement of their own to fail: a
 * call then waits for at most one statement's deadline, whatever was in flight when it was made.
 *
 * Not the Redis adapter's `TurnBatcher`, which sends every turn's items at once whatever is in
 * flight (its commands share one pipelined connection): here one batch in flight at a time is the
 * point, as a pooled connection runs one statement at a time and the next batch grows while it runs.
 */
export class Batcher<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private sending = false;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: { maxBatch?: number; failsWaiting?: (error: unknown) => boolean } = {},
  ) {}

  /** `item`'s result, from the batch it goes out in. */
  add(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.sending || this.scheduled || this.pending.length === 0) return;
    this.scheduled = true;
    atTurnEnd(() => {
      this.scheduled = false;
      void this.send();
    });
  }

  private async send(): Promise<void> {
    const batch = this.pending.splice(0, this.options.maxBatch ?? 500);
    this.sending = true;
    try {
      const results = await this.run(batch.map((entry) => entry.item));
      batch.forEach((entry, i) => entry.resolve(results[i]!));
    } catch (error) {
      const failed = this.options.failsWaiting?.(error) ? batch.concat(this.pending.splice(0)) : batch;
      for (const entry of failed) entry.reject(error);
    } finally {
      this.sending = false;
      this.schedule();
    }
  }
}
