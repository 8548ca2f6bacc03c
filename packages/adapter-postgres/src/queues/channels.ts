/** @module The NOTIFY channel names of the queues and the feed: plain identifiers, unique per schema. */
import { createHash } from 'node:crypto';

const hash = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/**
 * The channel the queues' wake-ups travel on (payload: `first`, `retry` or `reply`): `<schema>_queue`
 * for a schema of up to 40 characters, else a hash of it (channel names stop at 63 bytes).
 */
export function queueChannel(schema: string): string {
  return schema.length <= 40 ? `${schema}_queue` : `q_${hash(schema).slice(0, 40)}`;
}

/** One conversation's feed channel: `f_` + 40 hex digits of a hash of schema, workspace and conversation. */
export function feedChannel(schema: string, workspaceId: string, conversationId: string): string {
  return `f_${hash(schema, workspaceId, conversationId).slice(0, 40)}`;
}
