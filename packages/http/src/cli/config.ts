/** @module Server configuration from environment variables (docs/operations.md), validated at start-up. */
import {
  DEFAULT_WEBHOOK_RETRY_DELAYS,
  PLANS,
  SCOPES,
  apiKeyChecksumFails,
  type Plan,
  type RateLimitFailurePolicy,
  type Scope,
} from '@parley/core';
import * as v from 'valibot';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../app/logger.js';
import { DEFAULT_BODY_LIMIT_BYTES } from '../app/middleware/json-body.js';
import { readModelsConfig, type ModelConfig } from './models-config.js';
import { readRedisConfig, type RedisConfig } from './redis-config.js';
import { checkOneBackend, readDatabaseConfig, type DatabaseConfig } from './database-config.js';
import { keyPlanProblems } from './key-plans.js';

export type { RedisConfig } from './redis-config.js';
export type { DatabaseConfig } from './database-config.js';
export type { ModelConfig } from './models-config.js';

/** One entry of `API_KEYS`. `scopes` absent means `*`; `[]` grants nothing (docs/authentication.md). */
export interface ApiKeyEntry {
  key: string;
  workspace: string;
  plan: Plan;
  scopes?: Array<Scope | '*'>;
  /** Requests per rolling hour; required for `enterprise`, overrides the plan's limit otherwise. */
  limitPerHour?: number;
}

/** The parsed configuration of the ready-made server. */
export interface Config {
  /** `PORT`, default 3000 (0 picks a free port). */
  port: number;
  /** `HOST`, default `127.0.0.1`. */
  host: string;
  /**
   * `REDIS_URL` or `REDIS_CLUSTER_NODES`, with `REDIS_PREFIX` (default `parley:`): storage, rate
   * limits and API keys on Redis. `undefined` (neither set) means memory storage.
   */
  redis: RedisConfig | undefined;
  /**
   * `DATABASE_URL` (PostgreSQL) or `DATA_DIR` (embedded PostgreSQL in a folder), with their
   * settings: storage, rate limits, API keys and queues on PostgreSQL. At most one of Redis,
   * `DATABASE_URL` and `DATA_DIR` is set; `undefined` with `redis` too means memory storage.
   */
  database?: DatabaseConfig | undefined;
  /** `API_KEYS`; unset means one development key on memory storage, none on Redis. */
  apiKeys: ApiKeyEntry[] | undefined;
  /** `RATE_LIMIT_FAILURE`: what the rate limiter decides when its store fails; default `open`. */
  rateLimitFailure: RateLimitFailurePolicy;
  /** `BODY_LIMIT_BYTES`, default 1 MiB. */
  bodyLimitBytes: number;
  /** `WEBHOOK_ALLOW_PRIVATE_URLS`, default false. */
  webhookAllowPrivateUrls: boolean;
  /**
   * `WEBHOOK_RETRY_DELAYS` in seconds (fractions allowed, each at most 86 400), default the
   * Standard Webhooks schedule 5,300,1800,7200,18000,36000,50400,72000,86400.
   */
  webhookRetryDelaysSeconds: number[];
  /** `EVENT_RETENTION_DAYS`: how long events (and the deliveries log) are kept, default 14. */
  eventRetentionDays: number;
  /** `DELIVERY_WORKER`: run a delivery worker inside `parley serve`, default true. */
  deliveryWorker: boolean;
  /** `LOG_LEVEL`, default `info`. */
  logLevel: LogLevel;
  /** `LOG_FORMAT`: `json`, `pretty` or `auto` (default: pretty on a terminal, JSON otherwise). */
  logFormat: LogFormat;
  /** `CORS_ORIGINS`: `'*'` or exact origins allowed to call from a browser; unset: no CORS headers. */
  corsOrigins?: '*' | string[];
  /** `CONSOLE`: serve the web console at `/console` (and redirect `/` there), default true (docs/console.md). */
  console: boolean;
  /** `MODELS`: agent model names → Chat Completions models; `{}` (unset) means agents never reply. */
  models: Record<string, ModelConfig>;
  /** `REPLY_CONTEXT_MESSAGES`: how many latest messages a reply is generated from; default 50. */
  replyContextMessages: number;
  /**
   * `REPLY_GIVE_UP_SECONDS`: how long a reply request waits for a worker that has the agent's
   * model before it fails with `reply.failed`; default 600.
   */
  replyGiveUpSeconds: number;
  /**
   * `METRICS_PORT`: serve Prometheus metrics at `GET /metrics` on this port (on `HOST`, apart
   * from the API; 0 picks a free one); unset: no metrics listener.
   */
  metricsPort?: number;
}

/** Thrown by {@link loadConfig}; `message` lists every problem, one per line, never a secret. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

const DEFAULT_RETRY_DELAYS = DEFAULT_WEBHOOK_RETRY_DELAYS.join(',');

function integer(min: number, max: number) {
  // A maximum that only guards against unsafe integers is not worth stating.
  const message =
    max >= Number.MAX_SAFE_INTEGER
      ? `Expected an integer; must be at least ${min}.`
      : `Expected an integer from ${min} to ${max}.`;
  return v.pipe(
    v.string(),
    v.regex(/^\d{1,16}$/, message),
    v.transform(Number),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
}

/** An origin as browsers send it in `Origin`: `http(s)://host[:port]`, nothing more (RFC 6454). */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

const CORS_MESSAGE =
  'Expected * or comma-separated origins such as https://app.example.com (scheme, host and optional port; no path or trailing slash).';

const EnvSchemas = {
  PORT: integer(0, 65_535),
  METRICS_PORT: integer(0, 65_535),
  HOST: v.pipe(v.string(), v.regex(/^[^\s/]+$/, 'Expected a host name or IP address.')),
  BODY_LIMIT_BYTES: integer(1, Number.MAX_SAFE_INTEGER),
  WEBHOOK_ALLOW_PRIVATE_URLS: v.pipe(
    v.picklist(['true', 'false'], 'Expected true or false.'),
    v.transform((value) => value === 'true'),
  ),
  WEBHOOK_RETRY_DELAYS: v.pipe(
    v.string(),
    v.regex(
      /^(\d{1,5}(\.\d{1,3})?(,\d{1,5}(\.\d{1,3})?)*)?$/,
      'Expected comma-separated seconds, e.g. 5,300,1800 (fractions like 0.2 allowed).',
    ),
    v.transform((value) => (value === '' ? [] : value.split(',').map(Number))),
    v.check(
      (delays) => delays.every((delay) => delay <= 86_400),
      'Expected each delay to be at most 86400 seconds (24 h).',
    ),
  ),
  EVENT_RETENTION_DAYS: integer(1, 3650),
  REPLY_GIVE_UP_SECONDS: integer(1, 7 * 24 * 3600),
  CONSOLE: v.pipe(
    v.picklist(['true', 'false'], 'Expected true or false.'),
    v.transform((value) => value === 'true'),
  ),
  DELIVERY_WORKER: v.pipe(
    v.picklist(['true', 'false'], 'Expected true or false.'),
    v.transform((value) => value === 'true'),
  ),
  LOG_LEVEL: v.picklist(LOG_LEVELS, `Expected one of ${LOG_LEVELS.join(', ')}.`),
  LOG_FORMAT: v.picklist(LOG_FORMATS, `Expected one of ${LOG_FORMATS.join(', ')}.`),
  RATE_LIMIT_FAILURE: v.picklist(['open', 'closed'], 'Expected open or closed.'),
  CORS_ORIGINS: v.pipe(
    v.string(),
    v.transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim())
        .filter((origin) => origin !== ''),
    ),
    v.check(
      (origins) => (origins.length === 1 && origins[0] === '*') || (origins.length > 0 && origins.every(isOrigin)),
      CORS_MESSAGE,
    ),
    v.transform((origins): '*' | string[] => (origins[0] === '*' ? '*' : origins)),
  ),
};

/** A key that can travel in `Authorization: Bearer` (RFC 6750 b64token) and is not trivially guessable. */
const KeySchema = v.pipe(
  v.string('Expected a string.'),
  v.minLength(16, 'Expected at least 16 characters.'),
  v.maxLength(512, 'Expected at most 512 characters.'),
  v.regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'Expected only letters, digits and - . _ ~ + / (RFC 6750).'),
  v.check(
    (key) => !apiKeyChecksumFails(key),
    'A prl_ key of 40 characters is a generated key, and its checksum does not match: check it for a typo.',
  ),
);

/** The rules of what a key grants, shared by `API_KEYS` entries and `parley keys create`. */
export const KeyGrantSchemas = {
  workspace: v.pipe(
    v.string('Expected a string.'),
    v.regex(/^[A-Za-z0-9_.-]{1,128}$/, 'Expected 1–128 letters, digits, _ . or -.'),
  ),
  plan: v.picklist(PLANS, `Expected one of ${PLANS.join(', ')}.`),
  scopes: v.optional(
    v.array(v.picklist([...SCOPES, '*'], `Expected one of ${[...SCOPES, '*'].join(', ')}.`), 'Expected an array.'),
  ),
  limitPerHour: v.optional(
    v.pipe(
      v.number('Expected a number.'),
      v.safeInteger('Expected an integer.'),
      v.minValue(1, 'Expected at least 1.'),
    ),
  ),
};

const ApiKeyEntrySchema = v.strictObject({ key: KeySchema, ...KeyGrantSchemas });

const ApiKeysSchema = v.pipe(
  v.array(v.unknown(), 'Expected a JSON array of key entries.'),
  v.minLength(1, 'Expected at least one entry (leave API_KEYS unset for a development key).'),
);

/** Messages for the issues the schemas above leave to valibot, which would quote the input. */
function describeIssue(issue: v.BaseIssue<unknown>): string {
  if (issue.type !== 'strict_object') return 'Invalid value.';
  if (issue.received === 'undefined') return 'Required.';
  if (issue.expected === 'never') return 'Unknown field.';
  return 'Expected an object {key, workspace, plan, scopes?, limitPerHour?}.';
}

function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? [])
    .map((item) => (typeof item.key === 'number' ? `[${item.key}]` : `.${String(item.key)}`))
    .join('');
}

/**
 * Rules across entries: unique keys, and core's plan rules (docs/authentication.md, docs/rate-limits.md). `entries` are the
 * entries that passed on their own, with their index in `API_KEYS` so messages name the right one.
 */
function crossCheck(entries: { entry: ApiKeyEntry; index: number }[]): string[] {
  const problems = keyPlanProblems(
    entries.map(({ entry, index }) => ({
      workspaceId: entry.workspace,
      plan: entry.plan,
      limitPerHour: entry.limitPerHour,
      label: `API_KEYS[${index}]`,
    })),
  );
  const keys = new Set<string>();
  for (const { entry, index } of entries) {
    if (keys.has(entry.key)) problems.push(`API_KEYS[${index}].key: The same key appears twice.`);
    keys.add(entry.key);
  }
  return problems;
}

function parseApiKeys(raw: string, problems: string[]): ApiKeyEntry[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // Never quote the parser's message: it would print part of the keys.
    problems.push('API_KEYS: Not valid JSON.');
    return undefined;
  }
  const list = v.safeParse(ApiKeysSchema, value);
  if (!list.success) {
    problems.push(...list.issues.map((issue) => `API_KEYS: ${issue.message}`));
    return undefined;
  }
  // Each entry is checked on its own and the valid ones against each other, so one start-up
  // reports the problems of every entry at once instead of one fix-and-restart per entry.
  const valid: { entry: ApiKeyEntry; index: number }[] = [];
  const found: string[] = [];
  list.output.forEach((item, index) => {
    const result = v.safeParse(ApiKeyEntrySchema, item, { message: describeIssue });
    if (result.success) valid.push({ entry: result.output, index });
    else found.push(...result.issues.map((issue) => `API_KEYS[${index}]${issuePath(issue)}: ${issue.message}`));
  });
  found.push(...crossCheck(valid));
  problems.push(...found);
  return found.length === 0 ? valid.map(({ entry }) => entry) : undefined;
}

/**
 * Reads the server configuration from `env` (default `process.env`). Empty variables count as
 * unset. Messages name the variable and the rule, never the value, since `API_KEYS` is secret.
 * @throws ConfigError listing every invalid variable
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const read = <K extends keyof typeof EnvSchemas>(
    name: K,
    fallback?: string,
  ): v.InferOutput<(typeof EnvSchemas)[K]> | undefined => {
    const raw = env[name] === '' ? undefined : env[name];
    if (raw === undefined && fallback === undefined) return undefined;
    const result = v.safeParse(EnvSchemas[name], raw ?? fallback);
    if (result.success) return result.output as v.InferOutput<(typeof EnvSchemas)[K]>;
    problems.push(`${name}: ${result.issues[0]?.message ?? 'Invalid value.'}`);
    return undefined;
  };
  const config = {
    port: read('PORT', '3000'),
    host: read('HOST', '127.0.0.1'),
    redis: readRedisConfig(env, problems),
    database: readDatabaseConfig(env, problems),
    apiKeys: env.API_KEYS ? parseApiKeys(env.API_KEYS, problems) : undefined,
    rateLimitFailure: read('RATE_LIMIT_FAILURE', 'open'),
    bodyLimitBytes: read('BODY_LIMIT_BYTES', String(DEFAULT_BODY_LIMIT_BYTES)),
    webhookAllowPrivateUrls: read('WEBHOOK_ALLOW_PRIVATE_URLS', 'false'),
    webhookRetryDelaysSeconds: read('WEBHOOK_RETRY_DELAYS', DEFAULT_RETRY_DELAYS),
    eventRetentionDays: read('EVENT_RETENTION_DAYS', '14'),
    replyGiveUpSeconds: read('REPLY_GIVE_UP_SECONDS', '600'),
    deliveryWorker: read('DELIVERY_WORKER', 'true'),
    console: read('CONSOLE', 'true'),
    logLevel: read('LOG_LEVEL', 'info'),
    logFormat: read('LOG_FORMAT', 'auto'),
    corsOrigins: read('CORS_ORIGINS'),
    ...readModelsConfig(env, problems),
    metricsPort: read('METRICS_PORT'),
  };
  checkOneBackend(env, problems);
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    problems.push('METRICS_PORT: Expected a port other than PORT (metrics have a listener of their own).');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Config;
}

/**
 * Reads only the Redis variables (for `parley keys`, which needs nothing else).
 * @throws ConfigError listing every invalid Redis variable
 */
export function loadRedisConfig(env: Record<string, string | undefined> = process.env): RedisConfig | undefined {
  const problems: string[] = [];
  const redis = readRedisConfig(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return redis;
}

/** The storage backend variables alone: Redis, or PostgreSQL (`DATABASE_URL` / `DATA_DIR`), or neither (memory). */
export interface StorageConfig {
  redis: RedisConfig | undefined;
  database: DatabaseConfig | undefined;
}

/**
 * Reads only the storage backend variables (for `parley keys` and `parley migrate`, which need
 * nothing else), with the rule that at most one backend is set.
 * @throws ConfigError listing every invalid variable
 */
export function loadStorageConfig(env: Record<string, string | undefined> = process.env): StorageConfig {
  const problems: string[] = [];
  const redis = readRedisConfig(env, problems);
  const database = readDatabaseConfig(env, problems);
  checkOneBackend(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { redis, database };
}
