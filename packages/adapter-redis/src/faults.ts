/**
 * @module Telling "Redis is unavailable" apart from bugs, and wrapping it as core's
 * `service_unavailable`.
 */
import { ErrorCode, ParleyError, isParleyError } from '@parley/core';

/**
 * Error replies that mean "this server cannot serve right now" rather than "this command is
 * wrong": a replica still loading its dataset, a Cluster without a quorum or mid-resharding, a
 * failover in progress, a long-running script.
 */
const TRANSIENT_REPLIES = ['LOADING', 'CLUSTERDOWN', 'TRYAGAIN', 'MASTERDOWN', 'READONLY', 'BUSY', 'NOREPLICAS'];

const BUG_CLASSES = new Set(['TypeError', 'SyntaxError', 'RangeError', 'ReferenceError']);

/**
 * True when `error` is a connection fault: anything ioredis raises without the server having
 * answered (refused or lost connection, timeouts, closed client, empty queue policy, Cluster not
 * ready), and the transient error replies above. A `ReplyError` the server gave to a malformed
 * command or a failing script is a bug, not a fault.
 */
export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isParleyError(error)) return false;
  if (error.name === 'ReplyError') return TRANSIENT_REPLIES.some((reply) => error.message.startsWith(reply));
  // ioredis raises plain `Error`s (and MaxRetriesPerRequestError, ClusterAllFailedError) for
  // connection trouble; JavaScript's own error classes mean a bug in this package instead.
  return !BUG_CLASSES.has(error.name);
}

/** The `service_unavailable` error callers see when Redis cannot be reached; `cause` keeps why. */
export function storageUnavailable(cause: unknown): ParleyError {
  return new ParleyError(ErrorCode.serviceUnavailable, 'Storage is unavailable.', undefined, { cause });
}

/**
 * Drops the arguments ioredis attaches to a failed command's error (`error.command.args`: keys,
 * records, message text), keeping the command's name, so logging the error leaks no content.
 */
function withoutArguments(error: unknown): unknown {
  if (error instanceof Error && 'command' in error && typeof error.command === 'object' && error.command !== null) {
    const { name } = error.command as { name?: unknown };
    (error as { command: unknown }).command = { name };
  }
  return error;
}

/**
 * `error` as callers should see it, without command arguments: faults become
 * {@link storageUnavailable}, the rest unchanged.
 */
export function toAdapterError(error: unknown): unknown {
  const clean = withoutArguments(error);
  return isConnectionFault(clean) ? storageUnavailable(clean) : clean;
}
