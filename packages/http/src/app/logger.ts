/** @module Parley's structured logger (pino): JSON lines for machines, readable lines on a terminal (`LOG_FORMAT`). */
import { createRequire } from 'node:module';
import { destination as fileDestination, pino, type DestinationStream, type Logger } from 'pino';
import type Pretty from 'pino-pretty';

/** pino's levels, quietest last; `LOG_LEVEL` takes one of these. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `LOG_FORMAT`: `json` (one object per line), `pretty` (pino-pretty's human lines) or `auto` (pretty on a terminal, else JSON). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
/** One of {@link LOG_FORMATS}. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Default `json`; `auto` is `pretty` when stdout is a terminal. */
  format?: LogFormat;
}

/**
 * A pino logger writing to `destination` (default stdout), with ISO timestamps so lines read the
 * same as the API's timestamps (docs/api.md#ids-timestamps-and-bodies). JSON by default, one object
 * per line; `format: 'pretty'` (or `auto` on a terminal) writes pino-pretty's coloured lines
 * (`[12:00:00.000] INFO: request {"method":"GET",…}`, one line each), the same fields, for a person reading along
 * (docs/operations.md#logs).
 */
export function createLogger(
  level: LogLevel = 'info',
  destination?: DestinationStream,
  options: LoggerOptions = {},
): Logger {
  const base = { level, base: { service: 'parley' }, timestamp: pino.stdTimeFunctions.isoTime };
  const format =
    options.format === 'auto'
      ? destination === undefined && process.stdout.isTTY
        ? 'pretty'
        : 'json'
      : (options.format ?? 'json');
  if (format === 'pretty') {
    // Synchronous: a person reads these at a terminal's pace, and every line is out before exit.
    const colorize = destination === undefined && process.stdout.isTTY === true;
    // Loaded only here: JSON logging, the production default, never needs it.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof Pretty;
    return pino(
      base,
      pretty({
        colorize,
        sync: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'service',
        singleLine: true,
        ...(destination && { destination }),
      }),
    );
  }
  // Asynchronous: lines logged while a write is in flight go out together in the next one, so
  // the request log costs no write(2) per request. Nothing is lost at
  // exit: pino flushes this destination synchronously on the process's 'exit' (process.exit()
  // after a shutdown signal included), and every line is written in the order it was logged.
  return pino(base, destination ?? fileDestination({ dest: 1, sync: false }));
}

export type { Logger };
