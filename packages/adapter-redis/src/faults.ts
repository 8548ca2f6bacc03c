/**
 * @module Telling "Redis cannot serve" apart from bugs, wrapping it as core's
 * `service_unavailable`, and stripping command arguments from every Redis error before anyone
 * can log it.
 */
import { ErrorCode, ParleyError, isParleyError } from '@parley/core';
import { DEADLINE_REPLY } from './script.js';

/**
 * Error replies that mean "this server cannot serve right now" rather than "this command is
 * wrong": a replica still loading its dataset, a Cluster without a quorum or mid-resharding, a
 * failover in progress, a long-running script; and the operator's side of the deployment: memory
 * full under `noeviction` (`OOM`), persistence failing with `stop-writes-on-bgsave-error`
 * (`MISCONF`), and ACL or credential trouble (`NOPERM`, `NOAUTH`, `WRONGPASS`); and a script that
 * reached the server only after its caller's deadline (`PARLEY_DEADLINE`, see script.ts). None is the
 * caller's fault, none is fixed by changing the request: they answer 503, not 500.
 */
const UNAVAILABLE_REPLIES = [
  DEADLINE_REPLY,
  'LOADING',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'MASTERDOWN',
  'READONLY',
  'BUSY',
  'NOREPLICAS',
  'OOM',
  'MISCONF',
  'NOPERM',
  'NOAUTH',
  'WRONGPASS',
];

/**
 * Inside a Lua script Redis 7.0 reports an ACL refusal as a plain `ERR`
 * ("The user executing the script can't run this command or subcommand"), and later versions
 * may prefix the original code; both are matched here.
 */
const UNAVAILABLE_IN_SCRIPT = /\b(?:OOM|MISCONF|NOPERM|NOAUTH|READONLY)\b|can't run this command or subcommand/;

const BUG_CLASSES = new Set(['TypeError', 'SyntaxError', 'RangeError', 'ReferenceError']);

/**
 * True when `error` means Redis cannot serve: anything ioredis raises without the server having
 * answered (refused or lost connection, timeouts, closed client, empty queue policy, Cluster not
 * ready), and the error replies listed above. Any other `ReplyError` (a malformed command, a
 * failing script) is a bug, not a fault.
 */
export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isParleyError(error)) return false;
  if (error.name === 'ReplyError') {
    return (
      UNAVAILABLE_REPLIES.some((reply) => error.message.startsWith(reply)) || UNAVAILABLE_IN_SCRIPT.test(error.message)
    );
  }
  // ioredis raises plain `Error`s (and MaxRetriesPerRequestError, ClusterAllFailedError) for
  // connection trouble; JavaScript's own error classes mean a bug in this package instead.
  return !BUG_CLASSES.has(error.name);
}

/** The `service_unavailable` error callers see when Redis cannot serve; `cause` keeps why. */
export function storageUnavailable(cause: unknown): ParleyError {
  return new ParleyError(ErrorCode.serviceUnavailable, 'Storage is unavailable.', undefined, { cause });
}

/** Properties through which ioredis links one error to others (Cluster, retries). */
const LINKED_ERRORS = ['cause', 'lastNodeError', 'previousErrors'] as const;

/** Redis quotes the start of an unknown command's arguments back in its reply. */
const ECHOED_ARGUMENTS = /(with args beginning with:).*$/s;
/** Arguments shorter than this are left in messages: too short to be a secret, too likely to hit words. */
const SHORTEST_REDACTED = 6;

/** `text` without echoed arguments: the reply's echo cut, and any argument quoted verbatim replaced. */
function redactText(text: string, args: readonly string[]): string {
  let redacted = text.replace(ECHOED_ARGUMENTS, '$1 (redacted)');
  for (const arg of args) if (arg.length >= SHORTEST_REDACTED) redacted = redacted.split(arg).join('(redacted)');
  return redacted;
}

/**
 * Removes the command arguments ioredis attaches to its errors (`error.command = {name, args}`),
 * keeping only the command's name, and any argument the server quoted back in the message (an
 * unknown command's reply does), in `error` and every error linked to it. A script's arguments
 * are whole records (webhook secrets, system prompts, message text) and `EVAL`'s first argument
 * is the script itself; loggers such as pino serialize every enumerable property of an error and
 * its stack, so they must be gone before the error leaves this package. Mutates and returns `error`.
 */
export function redactRedisError<T>(error: T, seen = new Set<unknown>()): T {
  if (typeof error !== 'object' || error === null || seen.has(error)) return error;
  seen.add(error);
  const record = error as Record<string, unknown>;
  const command = record.command;
  if (typeof command === 'object' && command !== null) {
    const { name, args } = command as { name?: unknown; args?: unknown };
    record.command = typeof name === 'string' ? { name } : {};
    const texts = Array.isArray(args) ? args.filter((arg): arg is string => typeof arg === 'string') : [];
    if (error instanceof Error) {
      error.message = redactText(error.message, texts);
      if (error.stack) {
        // The stack starts with the message; the frames below it are code locations.
        const [head = '', ...frames] = error.stack.split('\n');
        error.stack = [redactText(head, texts), ...frames].join('\n');
      }
    }
  }
  for (const property of LINKED_ERRORS) {
    const linked = record[property];
    if (Array.isArray(linked)) for (const item of linked) redactRedisError(item, seen);
    else redactRedisError(linked, seen);
  }
  return error;
}

/**
 * `error` as callers should see it: faults become {@link storageUnavailable}, the rest unchanged;
 * either way with command arguments removed ({@link redactRedisError}).
 */
export function toAdapterError(error: unknown): unknown {
  redactRedisError(error);
  return isConnectionFault(error) ? storageUnavailable(error) : error;
}
