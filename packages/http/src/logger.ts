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
  // Asynchronous: lines logged while a write is in flight go out together in the next one, so
  // the request log costs a few µs per request instead of a write(2) each. Nothing is lost at
  // exit: pino flushes this destination synchronously on the process's 'exit' (process.exit()
  // after a shutdown signal included), and every line is written in the order it was logged.
  return pino(options, destination ?? fileDestination({ dest: 1, sync: false }));
}

export type { Logger };
