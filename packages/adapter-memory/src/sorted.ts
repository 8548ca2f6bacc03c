/** @module Binary search over arrays sorted by `id`. */

/** Index of the first element whose id is ≥ `id` (`items.length` when none): O(log n). */
export function lowerBound(items: ReadonlyArray<{ id: string }>, id: string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (items[mid]!.id < id) low = mid + 1;
    else high = mid;
  }
  return low;
}
