/**
 * @module Hidden fields: fields of a stored record that only core reads — an agent's tools secret and
 * MCP header values,
 * the answers a paused reply has been given (docs/replies-and-streams.md#tools) and the trace
 * context it paused in (docs/observability.md#across-the-queue). A store keeps them with the record but never puts them in
 * an event's `data` (ports/storage.ts, "Hidden fields"); services leave them out of responses.
 */
import { recordVersion, withVersion } from './record-version.js';

/** The top-level field names no event's `data` carries, whatever record they belong to. */
export const HIDDEN_FIELDS: readonly string[] = ['toolsSecret', 'toolAnswers', 'pausedTraceContext', 'mcpHeaders'];

/**
 * A copy of `record` without its {@link HIDDEN_FIELDS} (carrying its version, `recordVersion`), or
 * `record` itself when it has none.
 */
export function withoutHiddenFields<T extends object>(record: T): T {
  if (!HIDDEN_FIELDS.some((field) => field in record)) return record;
  const copy = { ...record } as Record<string, unknown>;
  for (const field of HIDDEN_FIELDS) delete copy[field];
  const version = recordVersion(record);
  return (version === 0 ? copy : withVersion(copy, version)) as T;
}
