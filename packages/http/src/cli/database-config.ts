/**
 * @module The PostgreSQL variables of the server configuration (docs/configuration.md):
 * `DATABASE_URL` (a PostgreSQL server) or `DATA_DIR` (embedded PGlite in a folder), with
 * `DATABASE_MIGRATE`, `PARLEY_SCHEMA`, `DATABASE_POOL_SIZE`, `DATABASE_STATEMENT_TIMEOUT_MS` and
 * `DATABASE_LISTEN_URL`; and the rule that at most one backend is named.
 */
import * as v from 'valibot';

/** Where the server keeps its data on PostgreSQL, and how it connects. */
export type DatabaseConfig = ({ connectionString: string } | { dataDir: string }) & {
  /** `DATABASE_MIGRATE`: `auto` (default) applies pending migrations at start-up; `off` refuses an old schema. */
  migrate: 'auto' | 'off';
  /** `PARLEY_SCHEMA`, default `parley`. */
  schema: string;
  /** `DATABASE_POOL_SIZE`: connections in the pool (DATABASE_URL only); default 10. */
  poolSize?: number;
  /** `DATABASE_STATEMENT_TIMEOUT_MS`: server-side statement_timeout (DATABASE_URL only); default 5 000. */
  statementTimeoutMs?: number;
  /** `DATABASE_LISTEN_URL`: a direct connection for LISTEN behind a transaction-mode pooler. */
  listenUrl?: string;
};

const POSTGRES_URL = /^postgres(ql)?:$/;
const isPostgresUrl = (value: string) => URL.canParse(value) && POSTGRES_URL.test(new URL(value).protocol);

const count = (min: number, max: number, message: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,9}$/, message),
    v.transform(Number),
    v.minValue(min, message),
    v.maxValue(max, message),
  );

const Schemas = {
  DATABASE_MIGRATE: v.picklist(['auto', 'off'], 'Expected auto or off.'),
  // A plain identifier, so it needs no quoting in a DBA's psql session either.
  PARLEY_SCHEMA: v.pipe(
    v.string(),
    v.regex(
      /^[a-z_][a-z0-9_]{0,62}$/,
      'Expected a lower-case identifier: letters, digits and _ (at most 63), not starting with a digit.',
    ),
  ),
  DATABASE_POOL_SIZE: count(1, 1000, 'Expected an integer from 1 to 1000.'),
  DATABASE_STATEMENT_TIMEOUT_MS: count(100, 3_600_000, 'Expected an integer from 100 to 3600000 (ms).'),
};

/**
 * The backends named in `env` (empty counts as unset): `redis`, `database` (DATABASE_URL),
 * `dataDir` (DATA_DIR). Appends a problem listing them when more than one is set.
 */
export function checkOneBackend(env: Record<string, string | undefined>, problems: string[]): void {
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  const named = [
    ...(set('REDIS_URL') || set('REDIS_CLUSTER_NODES') ? [set('REDIS_URL') ? 'REDIS_URL' : 'REDIS_CLUSTER_NODES'] : []),
    ...(set('DATABASE_URL') ? ['DATABASE_URL'] : []),
    ...(set('DATA_DIR') ? ['DATA_DIR'] : []),
  ];
  if (named.length > 1) {
    problems.push(
      `${named.join(', ')}: Set one storage backend, not ${named.length}: REDIS_URL (or REDIS_CLUSTER_NODES) for Redis, DATABASE_URL for PostgreSQL, DATA_DIR for embedded PostgreSQL in a folder; none for memory.`,
    );
  }
}

/**
 * Reads the PostgreSQL variables from `env` (empty counts as unset), appending one message per
 * problem to `problems` — never a value, since a URL may hold a password. `undefined` when
 * neither `DATABASE_URL` nor `DATA_DIR` is set, or when there were problems.
 */
export function readDatabaseConfig(
  env: Record<string, string | undefined>,
  problems: string[],
): DatabaseConfig | undefined {
  const get = (name: string) => (env[name] === '' ? undefined : env[name]);
  const before = problems.length;
  const read = <K extends keyof typeof Schemas>(name: K): v.InferOutput<(typeof Schemas)[K]> | undefined => {
    const raw = get(name);
    if (raw === undefined) return undefined;
    const result = v.safeParse(Schemas[name], raw);
    if (result.success) return result.output as v.InferOutput<(typeof Schemas)[K]>;
    problems.push(`${name}: ${result.issues[0]?.message ?? 'Invalid value.'}`);
    return undefined;
  };
  const [url, dataDir, listenUrl] = [get('DATABASE_URL'), get('DATA_DIR'), get('DATABASE_LISTEN_URL')];
  if (url !== undefined && !isPostgresUrl(url))
    problems.push('DATABASE_URL: Expected a postgres:// or postgresql:// URL.');
  if (listenUrl !== undefined && !isPostgresUrl(listenUrl))
    problems.push('DATABASE_LISTEN_URL: Expected a postgres:// or postgresql:// URL.');
  const settings = {
    migrate: read('DATABASE_MIGRATE') ?? 'auto',
    schema: read('PARLEY_SCHEMA') ?? 'parley',
    poolSize: read('DATABASE_POOL_SIZE'),
    statementTimeoutMs: read('DATABASE_STATEMENT_TIMEOUT_MS'),
  };
  if (url === undefined && dataDir === undefined) {
    const orphans = [
      'DATABASE_MIGRATE',
      'PARLEY_SCHEMA',
      'DATABASE_POOL_SIZE',
      'DATABASE_STATEMENT_TIMEOUT_MS',
      'DATABASE_LISTEN_URL',
    ].filter((name) => get(name) !== undefined);
    if (orphans.length > 0)
      problems.push(`${orphans.join(', ')}: Only used with DATABASE_URL or DATA_DIR, and neither is set.`);
  }
  if (dataDir !== undefined) {
    const serverOnly = ['DATABASE_POOL_SIZE', 'DATABASE_STATEMENT_TIMEOUT_MS', 'DATABASE_LISTEN_URL'].filter(
      (name) => get(name) !== undefined,
    );
    if (serverOnly.length > 0 && url === undefined)
      problems.push(
        `${serverOnly.join(', ')}: Only used with DATABASE_URL (DATA_DIR runs PostgreSQL inside this process).`,
      );
  }
  if (problems.length > before || (url === undefined && dataDir === undefined)) return undefined;
  const target = url !== undefined ? { connectionString: url } : { dataDir: dataDir! };
  return {
    ...target,
    migrate: settings.migrate,
    schema: settings.schema,
    ...(settings.poolSize !== undefined && { poolSize: settings.poolSize }),
    ...(settings.statementTimeoutMs !== undefined && { statementTimeoutMs: settings.statementTimeoutMs }),
    ...(listenUrl !== undefined && { listenUrl }),
  };
}

/** How to name `config` in messages: the URL with any password masked, or the folder. */
export function describeDatabase(config: DatabaseConfig): string {
  if ('dataDir' in config) return `embedded PostgreSQL in ${config.dataDir}`;
  const url = new URL(config.connectionString);
  if (url.password !== '') url.password = '***';
  return `PostgreSQL ${url.toString()}`;
}
