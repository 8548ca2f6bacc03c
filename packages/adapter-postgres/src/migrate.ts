/**
 * @module Schema migrations: the numbered `.sql` files in the package's `migrations/` folder,
 * applied in order under a transaction-scoped advisory lock (two runners at once: the second waits,
 * then finds nothing to do), each recorded in `<schema>.schema_migrations`. The files rely on
 * `search_path`, which the runner sets to the schema, so they work for any schema name and can be
 * run with psql (docs/storage.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { quoteSchema } from './schema.js';
import type { Sql } from './sql.js';

/** One migration file: `0001_init.sql` → version 1, name `init`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Every migration shipped with this package, in version order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .flatMap((file) => {
      const match = FILE.exec(file);
      return match ? [{ version: Number(match[1]), name: match[2]!, sql: readFileSync(`${dir}/${file}`, 'utf8') }] : [];
    })
    .sort((a, b) => a.version - b.version);
}

/** What {@link migrate} did: the versions it applied (empty when the schema was current). */
export interface MigrateResult {
  applied: number[];
  version: number;
}

/** Thrown when the database's schema is newer than this code, or older while migrations are off. */
export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}

/** A stable advisory-lock key per schema, computed by PostgreSQL itself. */
const LOCK = `SELECT pg_advisory_xact_lock(hashtext('parley.migrate:' || $1))`;

/** What every run starts with: the schema, `search_path` set to it (the files rely on it) and the versions table. */
function openRun(quoted: string): string {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${quoted}; SET LOCAL search_path TO ${quoted};`,
    `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());`,
  ].join('\n');
}

/**
 * One migration applied and recorded. The file may end in a comment without a newline, hence the
 * line break before the `;`; the name is quoted as a literal, since a script takes no parameters.
 */
function step(migration: Migration): string {
  const name = `'${migration.name.replaceAll("'", "''")}'`;
  return `${migration.sql}\n;\nINSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${name}) ON CONFLICT (version) DO NOTHING;`;
}

/**
 * The SQL script {@link migrate} runs on a `schema` that has no migration yet, without the
 * advisory lock: the same schema, `schema_migrations` rows and `search_path`. It must run in one
 * transaction (`SET LOCAL`). For a process that cannot import this module: a new `DATA_DIR`'s
 * child process applies it (embedded.ts, docs/storage.md#embedded-mode-pglite).
 */
export function migrationScript(schema: string, migrations: Migration[] = loadMigrations()): string {
  return [openRun(quoteSchema(schema)), ...migrations.map(step)].join('\n');
}

/**
 * Applies every pending migration to `schema` in one transaction (all or nothing) under an
 * advisory lock. Throws {@link SchemaVersionError} when the database records a version this code
 * does not know (a newer Parley migrated it: refuse rather than corrupt).
 */
export async function migrate(
  sql: Sql,
  schema: string,
  migrations: Migration[] = loadMigrations(),
): Promise<MigrateResult> {
  const quoted = quoteSchema(schema);
  return sql.transaction(async (tx) => {
    // The pool's statement_timeout bounds requests, not this: waiting for another runner's
    // migrations and applying ones that rewrite a large table may rightly take longer.
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.query(LOCK, [schema]);
    await tx.exec(openRun(quoted));
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((row) => row.version),
    );
    refuseNewer(done, migrations, schema);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.exec(step(migration));
      applied.push(migration.version);
    }
    return { applied, version: latest(migrations) };
  });
}

/**
 * For `DATABASE_MIGRATE=off`: resolves when `schema` is exactly at this code's version, and throws
 * {@link SchemaVersionError} saying what to do when it is behind (run `parley migrate`) or ahead.
 */
export async function checkSchema(sql: Sql, schema: string, migrations: Migration[] = loadMigrations()): Promise<void> {
  const quoted = quoteSchema(schema);
  const [exists] = await sql.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [
    `${quoted}.schema_migrations`,
  ]);
  const done = new Set(
    exists?.present
      ? (await sql.query<{ version: number }>(`SELECT version FROM ${quoted}.schema_migrations`)).map(
          (row) => row.version,
        )
      : [],
  );
  refuseNewer(done, migrations, schema);
  const pending = migrations.filter((migration) => !done.has(migration.version)).map((migration) => migration.version);
  if (pending.length > 0) {
    throw new SchemaVersionError(
      `PostgreSQL schema "${schema}" lacks migrations ${pending.join(', ')} and DATABASE_MIGRATE=off: run \`parley migrate\` (or set DATABASE_MIGRATE=auto).`,
    );
  }
}

function refuseNewer(done: Set<number>, migrations: Migration[], schema: string): void {
  const known = latest(migrations);
  const newer = [...done].filter((version) => version > known);
  if (newer.length > 0) {
    throw new SchemaVersionError(
      `PostgreSQL schema "${schema}" is at version ${Math.max(...newer)}, newer than this Parley (${known}): upgrade Parley, or point it at another schema/database.`,
    );
  }
}

function latest(migrations: Migration[]): number {
  return migrations.at(-1)?.version ?? 0;
}
