/** @module The logger every worker reports to. */

/** Where workers report; pino's logger fits. Entries carry ids, counts and statuses, never a secret or content. */
export interface WorkerLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A logger that drops everything (the default of library use). */
export const silentLogger: WorkerLogger = { debug() {}, info() {}, warn() {}, error() {} };
