/**
 * @module How the in-process store applies a declarative change (ports/storage.ts `Change`): the
 * conditions, the merge and the version, all inside the caller's synchronous section.
 */
import {
  frozenCopy,
  recordVersion,
  withVersion,
  type Change,
  type Condition,
  type DeleteOptions,
  type WriteResult,
} from '@parley/core/adapter';
import type { RecordIndex } from './record-index.js';

/** `record` (whose fields are deep-frozen already) as a frozen record carrying `version`. */
export function versioned<T extends object>(record: T, version: number): T {
  return Object.freeze(withVersion({ ...record }, version));
}

function holds<T>(stored: T, condition: Condition<T>): boolean {
  const value = (stored as Record<string, unknown>)[condition.field] ?? null;
  return 'equals' in condition ? value === condition.equals : typeof value === 'string' && value < condition.before;
}

/** Whether `stored` meets the version and field preconditions of a change or delete. */
export function meets<T extends object>(
  stored: T,
  { ifVersion, where }: DeleteOptions & Pick<Change<T>, 'where'>,
): boolean {
  if (ifVersion !== undefined && !ifVersion.includes(recordVersion(stored))) return false;
  return (where ?? []).every((condition) => holds(stored, condition));
}

/**
 * Applies `change` to the stored record `id`: `null` when there is none; `unmet` (nothing
 * written) when a precondition fails; otherwise stores the merged record — the stored one's
 * frozen fields shared, the given ones frozen copies — and answers `applied` with it.
 */
export function applyChange<T extends { id: string; updatedAt: string }>(
  records: RecordIndex<T>,
  id: string,
  change: Change<T>,
): WriteResult<T> | null {
  const stored = records.get(id);
  if (!stored) return null;
  if (!meets(stored, change)) return { outcome: 'unmet', record: stored };
  const merged: T = { ...stored, ...frozenCopy(change.set ?? {}), id };
  if (change.touch !== undefined && change.touch > merged.updatedAt) merged.updatedAt = change.touch;
  const record = versioned(merged, recordVersion(stored) + (change.keepVersion ? 0 : 1));
  records.set(record);
  return { outcome: 'applied', record };
}
