/**
 * @module `parley migrate`: applies the pending PostgreSQL migrations (docs/storage.md) under the
 * advisory lock the server's own `DATABASE_MIGRATE=auto` takes, and prints what it did — so a
 * deployment can migrate in a release step and run servers with `DATABASE_MIGRATE=off`.
 */
import { loadStorageConfig } from './config.js';
import { describeDatabase } from './database-config.js';
import type { KeysCommandIo } from './keys-command.js';
import { importPostgresAdapter } from '../server/adapter-packages.js';

const stdio: KeysCommandIo = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

/** Help of `parley migrate`. */
const MIGRATE_HELP = `Usage: parley migrate

Applies the pending migrations of the PostgreSQL schema (DATABASE_URL or DATA_DIR, and
PARLEY_SCHEMA, as for parley serve) under an advisory lock, and prints what it did. Running it
again is a no-op; a schema newer than this Parley is refused. Servers started with
DATABASE_MIGRATE=off then find the schema current.
`;

/**
 * Runs `parley migrate` with `argv` (what follows `migrate`) and `env`; resolves with the exit
 * code: 0 done (or nothing to do), 1 failed (no database configured, unreachable, schema newer),
 * 2 usage.
 */
export async function migrateCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  io: KeysCommandIo = stdio,
): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    io.out(MIGRATE_HELP);
    return 0;
  }
  if (argv.length > 0) {
    io.err(`parley migrate: takes no arguments.\n\n${MIGRATE_HELP}`);
    return 2;
  }
  try {
    const { database } = loadStorageConfig(env);
    if (database === undefined)
      throw new Error(
        'migrations are for PostgreSQL: set DATABASE_URL (or DATA_DIR) and PARLEY_SCHEMA as for `parley serve`.',
      );
    const { migrateDatabase } = await importPostgresAdapter(database);
    const target =
      'dataDir' in database ? { dataDir: database.dataDir } : { connectionString: database.connectionString };
    // A person is waiting, not a request: a slow first connection is given time.
    const result = await migrateDatabase({ ...target, schema: database.schema, connectionTimeoutMs: 10_000 });
    const where = `${describeDatabase(database)}, schema "${database.schema}"`;
    io.out(
      result.applied.length === 0
        ? `Schema is current at version ${result.version} (${where}): nothing to apply.\n`
        : `Applied migration${result.applied.length === 1 ? '' : 's'} ${result.applied.join(', ')} (${where}); the schema is at version ${result.version}.\n`,
    );
    return 0;
  } catch (error) {
    const failure = error as { message?: string; cause?: { message?: string } };
    io.err(`parley migrate: ${failure.cause?.message ?? failure.message ?? String(error)}\n`);
    return 1;
  }
}
