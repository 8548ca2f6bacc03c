/** @module Calls gathered over one turn of the event loop and sent together, one script per group. */
import type { RedisRunner } from './connection.js';

/** Items per send at most: a script's arguments are unpacked in Lua, which takes a few thousand values. */
const MAX_BATCH = 500;

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the items added during one turn of the event loop, by group, and at the turn's end —
 * before the turn's other commands leave, so nothing waits longer than it would have
 * ({@link RedisRunner.atTurnEnd}) — sends each group's items with one `send` call (at most 500
 * per call). A busy worker whose attempts end together thus runs one script for them instead of
 * one each. Each `add` resolves when the `send` carrying its item resolved — with the item's entry
 * of the array it resolved with, if any — and rejects with what it rejected with.
 */
export class TurnBatcher<T, R = void> {
  private readonly pending = new Map<string, Array<Pending<T, R>>>();
  private scheduled = false;

  /**
   * `send(items)` sends one group's items (all added with the same group) in one round trip, and
   * resolves with one result per item, in their order (or with nothing, when items have none).
   */
  constructor(
    private readonly runner: RedisRunner,
    private readonly send: (items: T[]) => Promise<readonly R[] | void>,
  ) {}

  /** Adds `item` to `group`'s batch of this turn; resolves with its result once it was sent. */
  add(group: string, item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      let list = this.pending.get(group);
      if (list === undefined) this.pending.set(group, (list = []));
      list.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        this.runner.atTurnEnd(() => void this.flush());
      }
    });
  }

  /** Sends what was added and not sent yet now (e.g. before closing); resolves when every send settled. */
  async flush(): Promise<void> {
    this.scheduled = false;
    const groups = [...this.pending.values()];
    this.pending.clear();
    const sends: Array<Promise<void>> = [];
    for (const list of groups) {
      for (let i = 0; i < list.length; i += MAX_BATCH) {
        const batch = list.slice(i, i + MAX_BATCH);
        sends.push(
          this.send(batch.map((each) => each.item)).then(
            (results) => batch.forEach((each, index) => each.resolve(results?.[index] as R)),
            (error: unknown) => batch.forEach((each) => each.reject(error)),
          ),
        );
      }
    }
    await Promise.all(sends);
  }
}
