/** @module Parley's structured JSON logger (pino). */
import { pino, type DestinationStream, type Logger } from 'pino';

/** pino's levels, quietest last; `LOG_LEVEL` takes one of these. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * A pino logger writing one JSON object per line to `destination` (default stdout), with ISO
 * timestamps so lines read the same as the API's timestamps (decisions §2).
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'parley' }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
