/** @module A workspace's records of one kind, by id and in id order, for reads and newest-first lists. */
import type { PageResult } from '@parley/core';
import type { OffsetPage } from '@parley/core/adapter';
import { lowerBound } from './sorted.js';

/**
 * Records keyed by id, also kept sorted by id ascending, so a newest-first page is read from the
 * end in O(offset + limit) instead of sorting on every list. Ids normally arrive in order (an
 * insert appends); a late one is placed by binary search. Records are stored as given: the caller
 * hands in frozen records (frozen-records.ts in core) and replaces, never mutates, them.
 */
export class RecordIndex<T extends { id: string }> {
  private readonly byId = new Map<string, T>();
  /** Every record of `byId`, sorted by id ascending. */
  private sorted: T[] = [];

  get size(): number {
    return this.byId.size;
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  values(): IterableIterator<T> {
    return this.byId.values();
  }

  /** Stores `record`, replacing the one with its id if any: O(log n), O(n) for a late new id. */
  set(record: T): void {
    const at = this.indexOf(record.id);
    if (this.byId.has(record.id)) this.sorted[at] = record;
    else if (at === this.sorted.length) this.sorted.push(record);
    else this.sorted.splice(at, 0, record);
    this.byId.set(record.id, record);
  }

  /** Removes the record with this id; `false` when there was none. O(n). */
  delete(id: string): boolean {
    if (!this.byId.delete(id)) return false;
    this.sorted.splice(this.indexOf(id), 1);
    return true;
  }

  /** Removes every record `remove` selects, in one pass: O(n). Returns those removed. */
  deleteWhere(remove: (record: T) => boolean): T[] {
    const removed: T[] = [];
    this.sorted = this.sorted.filter((record) => {
      if (!remove(record)) return true;
      removed.push(record);
      this.byId.delete(record.id);
      return false;
    });
    return removed;
  }

  /**
   * The page of records `keep` accepts, newest (highest id) first, and how many it accepts in
   * all. Without `keep`: O(offset + limit). With it, every record is tested once for the total
   * (no sort, no copy).
   */
  newestFirst(page: OffsetPage, keep?: (record: T) => boolean): PageResult<T> {
    const items: T[] = [];
    const sorted = this.sorted;
    if (!keep) {
      const first = sorted.length - 1 - page.offset;
      for (let i = first; i >= 0 && items.length < page.limit; i -= 1) items.push(sorted[i]!);
      return { items, total: sorted.length };
    }
    let total = 0;
    for (let i = sorted.length - 1; i >= 0; i -= 1) {
      const record = sorted[i]!;
      if (!keep(record)) continue;
      if (total >= page.offset && items.length < page.limit) items.push(record);
      total += 1;
    }
    return { items, total };
  }

  private indexOf(id: string): number {
    // The common case, a new id above all others, skips the search.
    const last = this.sorted[this.sorted.length - 1];
    if (last === undefined || last.id < id) return this.sorted.length;
    return lowerBound(this.sorted, id);
  }
}
