/** @module Parley's structured JSON logger (pino). */
import { destination as fileDestination, pino, type DestinationStream, type Logger } from 'pino';

/** pino's levels, quietest last; `LOG_LEVEL` takes one of these. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * A pino logger writing one JSON object per line to `destination` (default stdout), with ISO
 * timestamps so lines read the same as the API's timestamps (docs/api.md#ids-timestamps-and-bodies).
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'parley' }, timestamp: pino.stdTimeFunctions.isoTime };
  // pino's default stdout writer is asynchronous: lines still in flight when the process exits
  // after a shutdown signal can be lost or land out of order. One line per request is cheap
  // enough to write synchronously.
  return pino(options, destination ?? fileDestination({ dest: 1, sync: true }));
}

export type { Logger };
