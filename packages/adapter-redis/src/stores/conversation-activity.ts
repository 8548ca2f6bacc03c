/**
 * @module A conversation's record merged with its activity: the `lastMessageAt` each message
 * append keeps beside the record on Redis (see conversation-store.lua.ts).
 */
import type { Conversation } from '@parley/core';
import { strings, type ScriptReply } from '../script.js';

/** A conversation as read: its stored JSON and its activity ('' before the first message). */
export interface StoredConversation {
  json: string;
  activity: string;
}

/**
 * The conversation as the API shows it: `lastMessageAt` is the activity (when there is one), and
 * `updatedAt` the later of the record's own and that (ISO 8601 strings of one width compare as
 * their instants).
 */
export function mergeActivity({ json, activity }: StoredConversation): Conversation {
  const stored = JSON.parse(json) as Conversation;
  // Records stored before conversations had these fields read as never updated, without messages.
  const record = { ...stored, updatedAt: stored.updatedAt ?? stored.createdAt, lastMessageAt: stored.lastMessageAt ?? null };
  if (activity === '') return record;
  return { ...record, lastMessageAt: activity, updatedAt: activity > record.updatedAt ? activity : record.updatedAt };
}

/** The `{json, activity, …}` pairs of a script's reply, merged. */
export function mergePairs(rows: readonly string[]): Conversation[] {
  const out: Conversation[] = [];
  for (let i = 0; i + 1 < rows.length; i += 2) out.push(mergeActivity({ json: rows[i]!, activity: rows[i + 1]! }));
  return out;
}

/** Splits a `{total, json, activity, …}` page reply into `{ items, total }`. */
export function conversationPageReply(reply: ScriptReply): { items: Conversation[]; total: number } {
  const [total, ...rows] = strings(reply);
  return { items: mergePairs(rows), total: Number(total ?? 0) };
}
