/**
 * @module History cursors: opaque to callers, bound to one conversation.
 *
 * A cursor is base64url of `v1:<conversationId>:<messageId>`, naming the oldest message of the
 * page it came from. It carries no secret: a cursor that decodes but names a message that is not
 * in the conversation is refused by the store lookup, and one naming a real message is exactly
 * the cursor Parley would have issued, so accepting it reveals nothing new.
 */
import { ErrorCode, ParleyError } from '../errors.js';

const VERSION = 'v1';

/** The cursor for "messages older than `messageId`" in `conversationId`. */
export function encodeCursor(conversationId: string, messageId: string): string {
  return Buffer.from(`${VERSION}:${conversationId}:${messageId}`).toString('base64url');
}

/**
 * The message id a cursor points at.
 * @throws ParleyError `invalid_request` when the cursor does not decode or belongs to another
 *   conversation.
 */
export function decodeCursor(conversationId: string, cursor: string): string {
  const [version, owner, messageId, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (version !== VERSION || owner !== conversationId || !messageId || rest.length > 0) throw invalidCursor();
  return messageId;
}

/** The `invalid_request` error of every unusable cursor: one message, whatever was wrong with it. */
export function invalidCursor(): ParleyError {
  return new ParleyError(ErrorCode.invalidRequest, 'The cursor is not valid for this conversation.');
}
