/**
 * @module `parley keys create|list|revoke`: API keys in Redis or PostgreSQL (or a DATA_DIR folder
 * no server holds), managed from the command line. Memory storage has no such command: its keys
 * die with the server process (use `API_KEYS`).
 */
import { createCore, isParleyError, type Adapters, type ApiKeyGrant, type ApiKeyRecord, type Core } from '@parley/core';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { openAdapters } from '../server/backend.js';
import { keyPlanProblems } from './key-plans.js';
import { KeyGrantSchemas, loadStorageConfig } from './config.js';
import { parleyCommand } from './cli-name.js';

/** Help of `parley keys`. */
const KEYS_HELP = `Usage:
  parley keys create --workspace <id> --plan free|pro|enterprise [--limit-per-hour <n>] [--scopes <a,b>]
  parley keys list [--workspace <id>]
  parley keys revoke <keyId>

Manage API keys stored in Redis (REDIS_URL or REDIS_CLUSTER_NODES, and REDIS_PREFIX) or
PostgreSQL (DATABASE_URL and PARLEY_SCHEMA), as for parley serve; DATA_DIR works while no
server holds the folder. Running servers see changes at once. A new key must agree with its workspace's
other keys on plan and limit; enterprise needs --limit-per-hour. --scopes defaults to * (all);
an empty --scopes= grants nothing. The raw key is printed once; only its SHA-256 hash is stored.
`;

/** Where the command writes; default the process's stdout and stderr. */
export interface KeysCommandIo {
  out(text: string): void;
  err(text: string): void;
}

const stdio: KeysCommandIo = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

/** Deadline of each Redis call, and of the wait for the backend, in ms: generous, since a person is waiting rather than a request. */
const CLI_TIMEOUT_MS = 5_000;

/** A failure to report as `parley keys: <message>` with an exit code (2: usage, 1: anything else). */
class KeysCommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

const usage = (message: string) => new KeysCommandError(`${message}\n\n${KEYS_HELP}`, 2);

/** The flags of `create` as a grant, checked with the rules `API_KEYS` entries follow. */
function parseGrant(values: {
  workspace?: string;
  plan?: string;
  'limit-per-hour'?: string;
  scopes?: string;
}): ApiKeyGrant {
  const problems: string[] = [];
  const check = <T>(flag: string, schema: v.GenericSchema<unknown, T>, value: unknown): T | undefined => {
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    problems.push(`--${flag}: ${result.issues[0]?.message ?? 'Invalid value.'}`);
    return undefined;
  };
  if (values.workspace === undefined) problems.push('--workspace: Required.');
  if (values.plan === undefined) problems.push('--plan: Required.');
  const limit = values['limit-per-hour'];
  const grant = {
    workspaceId:
      values.workspace === undefined ? undefined : check('workspace', KeyGrantSchemas.workspace, values.workspace),
    plan: values.plan === undefined ? undefined : check('plan', KeyGrantSchemas.plan, values.plan),
    scopes:
      values.scopes === undefined
        ? undefined
        : check(
            'scopes',
            KeyGrantSchemas.scopes,
            values.scopes
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          ),
    limitPerHour:
      limit === undefined
        ? undefined
        : check('limit-per-hour', KeyGrantSchemas.limitPerHour, /^\d+$/.test(limit) ? Number(limit) : Number.NaN),
  };
  if (problems.length > 0) throw usage(problems.join('\n'));
  return grant as ApiKeyGrant;
}

function printKeys(records: ApiKeyRecord[], io: KeysCommandIo): void {
  const rows = [
    ['KEY ID', 'WORKSPACE', 'PLAN', 'LIMIT/H', 'SCOPES', 'CREATED'],
    ...records.map((r) => [
      r.keyId,
      r.workspaceId,
      r.plan,
      String(r.limitPerHour ?? '-'),
      r.scopes.length === 0 ? '(none)' : r.scopes.join(','),
      r.createdAt,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    io.out(
      `${row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}

async function create(core: Core, grant: ApiKeyGrant, io: KeysCommandIo): Promise<void> {
  const existing = await core.apiKeys.list(grant.workspaceId);
  const problems = keyPlanProblems([
    ...existing.map((record) => ({ ...record, label: `key ${record.keyId}` })),
    { workspaceId: grant.workspaceId, plan: grant.plan, limitPerHour: grant.limitPerHour, label: 'the new key' },
  ]);
  if (problems.length > 0) {
    throw new KeysCommandError(
      `${problems.join('\n')}\nAll keys of a workspace must agree on plan and limitPerHour (--plan, --limit-per-hour).`,
    );
  }
  const { key, record } = await core.apiKeys.issue(grant);
  const scopes = record.scopes.length === 0 ? 'no scopes' : `scopes ${record.scopes.join(',')}`;
  const limit = record.limitPerHour === undefined ? '' : `, ${record.limitPerHour} requests per hour`;
  io.out(
    `Created an API key for workspace "${record.workspaceId}" (plan ${record.plan}${limit}, ${scopes}).\n\n` +
      `  keyId  ${record.keyId}\n  key    ${key}\n\n` +
      `The key is shown only this once: Parley stores only its SHA-256 hash. Revoke it with \`${parleyCommand()} keys revoke ${record.keyId}\`.\n`,
  );
}

/** Parses `argv` (what follows `parley keys`) into a subcommand and its checked input. */
function parse(argv: string[]) {
  const [subcommand, ...rest] = argv;
  const options = {
    workspace: { type: 'string' },
    plan: { type: 'string' },
    'limit-per-hour': { type: 'string' },
    scopes: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usage(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const flags = Object.keys(values).filter((flag) => flag !== 'help');
  const allowOnly = (allowed: string[], positionalCount: number) => {
    const extra = flags.filter((flag) => !allowed.includes(flag));
    if (extra.length > 0) throw usage(`'keys ${subcommand}' takes no --${extra.join(', --')}.`);
    if (positionals.length !== positionalCount)
      throw usage(`'keys ${subcommand}' takes ${positionalCount === 0 ? 'no arguments' : 'one key id'}.`);
  };
  if (
    values.help ||
    subcommand === undefined ||
    subcommand === 'help' ||
    subcommand === '--help' ||
    subcommand === '-h'
  )
    return { kind: 'help' } as const;
  if (subcommand === 'create') {
    allowOnly(['workspace', 'plan', 'limit-per-hour', 'scopes'], 0);
    return { kind: 'create', grant: parseGrant(values) } as const;
  }
  if (subcommand === 'list') {
    allowOnly(['workspace'], 0);
    return { kind: 'list', workspace: values.workspace } as const;
  }
  if (subcommand === 'revoke') {
    allowOnly([], 1);
    return { kind: 'revoke', keyId: positionals[0]! } as const;
  }
  throw usage(`Unknown keys command '${subcommand}'.`);
}

/**
 * Runs `parley keys …` with `argv` (the arguments after `keys`) and `env`; resolves with the exit
 * code: 0 done, 1 failed (storage unavailable or unset, a DATA_DIR a server holds, unknown key id, plan conflict), 2 usage.
 */
export async function keysCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  io: KeysCommandIo = stdio,
): Promise<number> {
  let adapters: Adapters | undefined;
  try {
    const command = parse(argv);
    if (command.kind === 'help') {
      io.out(KEYS_HELP);
      return 0;
    }
    const { redis, database } = loadStorageConfig(env);
    if (redis === undefined && database === undefined) {
      throw new KeysCommandError(
        'keys live in Redis or PostgreSQL: set REDIS_URL (or REDIS_CLUSTER_NODES) and REDIS_PREFIX, or DATABASE_URL (or DATA_DIR) and PARLEY_SCHEMA, as for `parley serve`. With memory storage keys die with the server process; use API_KEYS instead.',
      );
    }
    adapters = await openAdapters({ redis, database }, { timeoutMs: CLI_TIMEOUT_MS });
    // PGlite's first open of a folder creates the database, which takes seconds on a busy machine.
    await adapters.ready(database !== undefined && 'dataDir' in database ? 60_000 : CLI_TIMEOUT_MS);
    const core = createCore(adapters);
    if (command.kind === 'create') await create(core, command.grant, io);
    else if (command.kind === 'list') printKeys(await core.apiKeys.list(command.workspace), io);
    else if (await core.apiKeys.revoke(command.keyId))
      io.out(`Revoked ${command.keyId}: requests with it answer 401 within 5 s on every server.\n`);
    else throw new KeysCommandError(`no API key with id '${command.keyId}'.`);
    return 0;
  } catch (error) {
    // The adapters report a call that failed or timed out as `service_unavailable`.
    const message = isParleyError(error, 'service_unavailable')
      ? `storage is unavailable (${error.message}).`
      : error instanceof Error
        ? error.message
        : String(error);
    io.err(`parley keys: ${message}\n`);
    return error instanceof KeysCommandError ? error.exitCode : 1;
  } finally {
    await adapters?.close();
  }
}
