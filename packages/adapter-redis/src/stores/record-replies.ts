/** @module The replies of the record scripts (records.lua.ts), decoded into the storage port's shapes. */
import type { PageResult } from '@parley/core';
import type { WriteResult } from '@parley/core/adapter';
import { strings, type ScriptReply } from '../script.js';
import { decodeRecord, decodeRecords } from './record-format.js';

/** A `{'applied' | 'unmet', stored}` reply (nil: no record) as the port's {@link WriteResult}. */
export function writeResult<T extends object>(reply: ScriptReply): WriteResult<T> | null {
  if (reply === null) return null;
  const [outcome, stored] = strings(reply);
  return { outcome: outcome as WriteResult<T>['outcome'], record: decodeRecord<T>(stored!) };
}

/** Splits a `{total, stored…}` page reply into `{ items, total }`. */
export function pageOf<T extends object>(reply: ScriptReply): PageResult<T> {
  const [total, ...rows] = strings(reply);
  return { items: decodeRecords<T>(rows), total: Number(total ?? 0) };
}
