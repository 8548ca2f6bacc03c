/**
 * @module Telling "the database cannot serve" apart from bugs, and wrapping it as core's
 * `service_unavailable` (503) without the statement's parameters or the server's row details.
 */
import { ErrorCode, ParleyError, isParleyError } from '@parley/core';

/**
 * SQLSTATE classes and codes that mean the database cannot serve right now, not that the
 * statement is wrong (PostgreSQL Appendix A): 08 connection exceptions, 53 insufficient resources,
 * 57 operator intervention (shutdown, statement_timeout's 57014), 40001/40P01 serialization
 * failure and deadlock, 25006 read-only transaction (a standby), 28 invalid authorization.
 */
const UNAVAILABLE = /^(08|53|57|28)|^(40001|40P01|25006)$/;

/** True when `error` means the database cannot serve (no answer at all, or one of the codes above). */
export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error) || isParleyError(error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE.test(code);
  // No SQLSTATE: a socket error (ECONNREFUSED, ETIMEDOUT…), a pool timeout, a closed client.
  return !(
    error instanceof TypeError ||
    error instanceof SyntaxError ||
    error instanceof RangeError ||
    error instanceof ReferenceError
  );
}

/** A copy of a database error with only its message, SQLSTATE and severity: no row `detail`, no query. */
export function redactPostgresError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { code, severity } = error as { code?: string; severity?: string };
  const redacted = new Error(error.message);
  redacted.name = error.name;
  Object.assign(redacted, code === undefined ? {} : { code }, severity === undefined ? {} : { severity });
  return redacted;
}

/** What a store throws: `service_unavailable` for faults, else the error without its details. */
export function storageError(error: unknown): unknown {
  if (isParleyError(error)) return error;
  if (isConnectionFault(error))
    return new ParleyError(ErrorCode.serviceUnavailable, 'Storage is unavailable.', undefined, {
      cause: redactPostgresError(error),
    });
  return redactPostgresError(error);
}

/**
 * True for a deadlock (SQLSTATE 40P01), as the driver threw it or as {@link storageError} wrapped
 * it: PostgreSQL rolled the statement back as a whole, so running it again is safe.
 */
export function isDeadlock(error: unknown): boolean {
  const cause = isParleyError(error) ? error.cause : error;
  return (cause as { code?: unknown } | null)?.code === '40P01';
}

/**
 * Runs the single statement `run` sends, up to `attempts` times in all while it ends in a
 * deadlock ({@link isDeadlock}); rethrows any other error, and the last deadlock.
 */
export async function againOnDeadlock<T>(run: () => Promise<T>, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (!isDeadlock(error) || attempt >= attempts) throw error;
    }
  }
}

/** True for what {@link storageError} made of a fault: the database cannot serve, so the next statement would fail alike. */
export const isUnavailable = (error: unknown): boolean =>
  isParleyError(error) && error.code === ErrorCode.serviceUnavailable;

/**
 * The server's message when `error` (what a first statement threw) means the connection settings
 * are wrong and no retry fixes them: a database that does not exist (3D000), a role, password or
 * `pg_hba.conf` entry refused (class 28), a TLS mode the server does not take or a certificate
 * that does not verify. `undefined` for anything else, such as a server not up yet.
 */
export function connectionRefusal(error: unknown): string | undefined {
  const inner = isParleyError(error) && error.cause instanceof Error ? error.cause : error;
  if (!(inner instanceof Error)) return undefined;
  const code = (inner as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return /^28|^3D000$/.test(code) ? `${inner.message} (SQLSTATE ${code})` : undefined;
  }
  if (typeof code === 'string' && /CERT|TLS|SSL/.test(code)) return `${inner.message} (${code})`;
  // node-postgres's own refusals carry no code: "The server does not support SSL connections", "SASL: …".
  return /\b(SSL|TLS|certificate)\b|^SASL: /i.test(inner.message) ? inner.message : undefined;
}
