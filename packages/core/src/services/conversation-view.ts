/** @module What the API shows of a stored conversation: without its hidden fields (the answers a paused reply was given). */
import { withoutHiddenFields } from '../hidden-fields.js';
import { recordVersion, withVersion } from '../record-version.js';
import type { Conversation } from '../types.js';

/**
 * `conversation` as the API shows it: without the answers kept for a paused reply's resumption
 * (`toolAnswers`, a hidden field: docs/replies-and-streams.md#tools), with `pendingToolCalls` `[]`
 * on a record stored before tools existed, carrying its version (`recordVersion`). Returns
 * `conversation` itself when nothing changes.
 */
export function conversationView(conversation: Conversation): Conversation {
  const shown = withoutHiddenFields(conversation);
  if (shown.pendingToolCalls !== undefined) return shown;
  return withVersion({ ...shown, pendingToolCalls: [] }, recordVersion(conversation));
}
