/**
 * @module Stopping a reply (docs/replies-and-streams.md#stopping-a-reply): what a reply worker
 * aborts a cancelled reply with, how the reply service tells that apart from other aborts, and what
 * a cancelled reply leaves in the conversation.
 */
import type { FinishReason } from '../ports/language-model.js';
import { errorResult } from './tool-calls.js';

/**
 * The reason a reply worker aborts a reply's signal with when the reply was cancelled
 * (`ReplyQueue.cancelled`): the reply service then stores what the reply had written, where a lost
 * lease or a stopping worker stores nothing.
 */
export class ReplyCancelledError extends Error {
  override readonly name = 'ReplyCancelledError';
  constructor() {
    super('The reply was cancelled.');
  }
}

/** True when `signal` was aborted because its reply was cancelled (see {@link ReplyCancelledError}). */
export function wasCancelled(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && signal.reason instanceof ReplyCancelledError;
}

/** Why a stored reply step ended: the model's reason, or `cancelled` when the reply was stopped. */
export type ReplyFinishReason = FinishReason | 'cancelled';

/** The result stored for a tool call its cancelled reply never made or finished: `{"error":"cancelled"}`. */
export const CANCELLED_RESULT = errorResult('cancelled');

/** What `POST /api/conversations/:id/reply/cancel` answers. */
export interface RepliesCancelled {
  /** The `inReplyTo` of each reply stopped, oldest first; `[]` when none was. */
  cancelled: Array<string | null>;
}
