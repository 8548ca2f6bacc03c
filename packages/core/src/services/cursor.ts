/**
 * @module Page cursors: opaque to callers, bound to the list they came from.
 *
 * A cursor is base64url of `v1:<owner>:<id>`: `owner` names the list (a conversation's history,
 * an endpoint's deliveries log, the event log) and `id` the record the next page starts from. It
 * carries no secret: a cursor that decodes but names a record that is not in that list is refused
 * by the store lookup, and one naming a real record is exactly the cursor Parley would have
 * issued, so accepting it reveals nothing new. Cursors of one list never work on another, since
 * owners differ (docs/pagination.md).
 */
import { ErrorCode, ParleyError } from '../errors.js';

const VERSION = 'v1';

/** The cursor for the record `id` of the list `owner` (e.g. a conversation id and a message id). */
export function encodeCursor(owner: string, id: string): string {
  return Buffer.from(`${VERSION}:${owner}:${id}`).toString('base64url');
}

/**
 * The cursor of a conversation's message, as a stream's `id:` and history's `nextCursor` give it:
 * `GET /api/conversations/:id/stream` (`Last-Event-ID`, `after`) and history (`after`) go on after
 * that message. For an HTTP layer that starts a stream after a message it knows by id.
 */
export function messageCursor(conversationId: string, messageId: string): string {
  return encodeCursor(conversationId, messageId);
}

/**
 * The record id a cursor points at.
 * @throws ParleyError `invalid_request` when the cursor does not decode or belongs to another list.
 */
export function decodeCursor(owner: string, cursor: string): string {
  const [version, from, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (version !== VERSION || from !== owner || !id || rest.length > 0) throw invalidCursor();
  return id;
}

/** The `invalid_request` error of every unusable cursor: one message, whatever was wrong with it. */
export function invalidCursor(): ParleyError {
  return new ParleyError(ErrorCode.invalidRequest, 'The cursor is not valid for this list.');
}
