/** @module The PostgreSQL schema Parley's tables live in, and quoting it safely into SQL text. */

/** The schema used when none is given (`PARLEY_SCHEMA`). */
export const DEFAULT_SCHEMA = 'parley';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * `schema` as a quoted SQL identifier. Only lower-case letters, digits and underscores (at most
 * 63 characters, not starting with a digit) are accepted, so the name needs no escaping and means
 * the same quoted or not; anything else throws a `TypeError` naming the rule.
 */
export function quoteSchema(schema: string): string {
  if (!IDENTIFIER.test(schema)) {
    throw new TypeError(
      `PostgreSQL schema ${JSON.stringify(schema)} is not a plain identifier (lower-case letters, digits and _, at most 63 characters, not starting with a digit).`,
    );
  }
  return `"${schema}"`;
}
