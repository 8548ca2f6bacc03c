/** @module Tests of environment configuration: defaults, per-variable and cross-entry rules. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadRedisConfig, loadStorageConfig } from './config.js';
import { describeDatabase } from './database-config.js';
import { describeRedis } from './redis-config.js';

const key = (extra: Record<string, unknown> = {}) => ({
  key: 'k'.repeat(20),
  workspace: 'acme',
  plan: 'pro',
  ...extra,
});

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the defaults of docs/operations.md', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      redis: undefined,
      apiKeys: undefined,
      rateLimitFailure: 'open',
      bodyLimitBytes: 1_048_576,
      webhookAllowPrivateUrls: false,
      webhookRetryDelaysSeconds: [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
      eventRetentionDays: 14,
      replyGiveUpSeconds: 600,
      deliveryWorker: true,
      console: true,
      logLevel: 'info',
      logFormat: 'auto',
      models: {},
      replyContextMessages: 50,
    });
  });

  it('reads every variable; empty ones count as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      REDIS_URL: 'redis://localhost:6379/0',
      API_KEYS: JSON.stringify([
        key({ scopes: ['agents:read'] }),
        { key: 'e'.repeat(16), workspace: 'big', plan: 'enterprise', limitPerHour: 50_000 },
      ]),
      BODY_LIMIT_BYTES: '2048',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,0.2,3',
      EVENT_RETENTION_DAYS: '30',
      DELIVERY_WORKER: 'false',
      CONSOLE: 'false',
      REPLY_GIVE_UP_SECONDS: '30',
      LOG_LEVEL: '',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      redis: { url: 'redis://localhost:6379/0', prefix: 'parley:' },
      bodyLimitBytes: 2048,
      webhookAllowPrivateUrls: true,
      webhookRetryDelaysSeconds: [1, 0.2, 3],
      eventRetentionDays: 30,
      replyGiveUpSeconds: 30,
      deliveryWorker: false,
      console: false,
      logLevel: 'info',
    });
    expect(config.apiKeys).toEqual([
      key({ scopes: ['agents:read'] }),
      { key: 'e'.repeat(16), workspace: 'big', plan: 'enterprise', limitPerHour: 50_000 },
    ]);
  });

  it('lists every invalid variable at once', () => {
    expect(
      problems({
        PORT: '70000',
        BODY_LIMIT_BYTES: '-1',
        LOG_LEVEL: 'loud',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'yes',
        WEBHOOK_RETRY_DELAYS: '5,,6',
        REDIS_URL: 'http://x',
        EVENT_RETENTION_DAYS: '0',
        DELIVERY_WORKER: 'no',
        CONSOLE: 'off',
      }),
    ).toEqual([
      'PORT: Expected an integer from 0 to 65535.',
      'REDIS_URL: Expected a redis:// or rediss:// URL.',
      'BODY_LIMIT_BYTES: Expected an integer; must be at least 1.',
      'WEBHOOK_ALLOW_PRIVATE_URLS: Expected true or false.',
      'WEBHOOK_RETRY_DELAYS: Expected comma-separated seconds, e.g. 5,300,1800 (fractions like 0.2 allowed).',
      'EVENT_RETENTION_DAYS: Expected an integer from 1 to 3650.',
      'DELIVERY_WORKER: Expected true or false.',
      'CONSOLE: Expected true or false.',
      expect.stringMatching(/^LOG_LEVEL: Expected one of fatal, error/),
    ]);
  });

  it('refuses a retry delay over 24 h', () => {
    expect(problems({ WEBHOOK_RETRY_DELAYS: '5,86401' })).toEqual([
      'WEBHOOK_RETRY_DELAYS: Expected each delay to be at most 86400 seconds (24 h).',
    ]);
  });

  it('rejects API_KEYS that is not JSON without quoting it', () => {
    const found = problems({ API_KEYS: '[{"key": "super-secret-value"' });
    expect(found).toEqual(['API_KEYS: Not valid JSON.']);
    expect(found.join()).not.toContain('super-secret');
  });

  it.each([
    [[], /at least one entry/],
    [[key({ key: 'short' })], /^API_KEYS\[0\]\.key: Expected at least 16/],
    [[key({ key: 'has spaces in it, sadly' })], /^API_KEYS\[0\]\.key: Expected only letters/],
    [
      [key({ key: `prl_${'a'.repeat(36)}` })],
      /^API_KEYS\[0\]\.key: A prl_ key of 40 characters is a generated key, and its checksum does not match/,
    ],
    [[key({ plan: 'gold' })], /^API_KEYS\[0\]\.plan: Expected one of free, pro, enterprise/],
    [[key({ scopes: ['agents:delete'] })], /^API_KEYS\[0\]\.scopes\[0\]: Expected one of/],
    [[key({ colour: 'red' })], /^API_KEYS\[0\]\.colour: Unknown field\.$/],
    [[{ key: 'k'.repeat(20), plan: 'pro' }], /^API_KEYS\[0\]\.workspace: Required\.$/],
    [['has spaces in it, sadly'], /^API_KEYS\[0\]: Expected an object/],
    [[key({ limitPerHour: 0 })], /^API_KEYS\[0\]\.limitPerHour: Expected at least 1/],
  ])('rejects API_KEYS entry %j', (entries, message) => {
    const found = problems({ API_KEYS: JSON.stringify(entries) });
    expect(found[0]).toMatch(message);
    expect(found.join()).not.toContain('has spaces');
  });

  it('enterprise needs limitPerHour', () => {
    expect(problems({ API_KEYS: JSON.stringify([key({ plan: 'enterprise' })]) })).toEqual([
      "API_KEYS[0]: plan 'enterprise' needs limitPerHour.",
    ]);
  });

  it('all entries of one workspace must agree on plan and limitPerHour', () => {
    expect(problems({ API_KEYS: JSON.stringify([key(), key({ key: 'x'.repeat(20), plan: 'free' })]) })).toEqual([
      "API_KEYS[1]: workspace 'acme' has plan 'pro' in API_KEYS[0] but 'free'.",
    ]);
    expect(
      problems({ API_KEYS: JSON.stringify([key({ limitPerHour: 10 }), key({ key: 'x'.repeat(20) })]) }),
    ).toHaveLength(1);
    expect(
      loadConfig({
        API_KEYS: JSON.stringify([
          key(),
          key({ key: 'x'.repeat(20), scopes: [] }),
          key({ key: 'y'.repeat(20), workspace: 'other', plan: 'free' }),
        ]),
      }).apiKeys,
    ).toHaveLength(3);
  });

  it('reports the problems of every entry at once, across entries too', () => {
    const entries = [
      key({ plan: 'gold' }),
      key({ key: 'short', colour: 'red' }),
      key({ key: 'x'.repeat(20), plan: 'enterprise', workspace: 'big' }),
      key({ key: 'x'.repeat(20) }),
    ];
    expect(problems({ API_KEYS: JSON.stringify(entries) })).toEqual([
      expect.stringMatching(/^API_KEYS\[0\]\.plan: Expected one of/),
      expect.stringMatching(/^API_KEYS\[1\]\.key: Expected at least 16/),
      'API_KEYS[1].colour: Unknown field.',
      "API_KEYS[2]: plan 'enterprise' needs limitPerHour.",
      'API_KEYS[3].key: The same key appears twice.',
    ]);
  });

  it('METRICS_PORT: a port of its own, or unset', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(problems({ METRICS_PORT: '3000' })).toEqual([
      'METRICS_PORT: Expected a port other than PORT (metrics have a listener of their own).',
    ]);
    expect(problems({ METRICS_PORT: 'x' })).toEqual(['METRICS_PORT: Expected an integer from 0 to 65535.']);
  });

  it('rejects the same key twice', () => {
    expect(problems({ API_KEYS: JSON.stringify([key(), key()]) })).toEqual([
      'API_KEYS[1].key: The same key appears twice.',
    ]);
  });

  it('the error message lists the problems one per line', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(
      'Invalid configuration:\n  - PORT: Expected an integer from 0 to 65535.',
    );
  });
});

describe('loadConfig: Redis and rate-limit failure variables', () => {
  it('REDIS_URL with REDIS_PREFIX', () => {
    expect(
      loadConfig({ REDIS_URL: 'rediss://user:pw@redis.internal:6380/2', REDIS_PREFIX: 'acme-prod:' }).redis,
    ).toEqual({
      url: 'rediss://user:pw@redis.internal:6380/2',
      prefix: 'acme-prod:',
    });
  });

  it('REDIS_CLUSTER_NODES: host:port pairs, IPv6 in brackets, spaces around commas allowed', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-2.internal:7001,[::1]:7002' }).redis).toEqual({
      clusterNodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-2.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      prefix: 'parley:',
    });
  });

  it.each([
    '10.0.0.1',
    '10.0.0.1:0',
    '10.0.0.1:65536',
    '10.0.0.1:7000,',
    'redis://10.0.0.1:7000',
    'a b:7000',
    '::1:7000',
  ])('rejects REDIS_CLUSTER_NODES=%j', (nodes) => {
    expect(problems({ REDIS_CLUSTER_NODES: nodes })).toEqual([
      'REDIS_CLUSTER_NODES: Expected comma-separated host:port pairs, e.g. 10.0.0.1:6379,10.0.0.2:6379.',
    ]);
  });

  it('refuses REDIS_URL and REDIS_CLUSTER_NODES together, naming both', () => {
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' })).toEqual([
      expect.stringMatching(/^REDIS_URL, REDIS_CLUSTER_NODES: Set one of them, not both/),
    ]);
  });

  it.each(['bad{prefix}:', 'has space:', 'x'.repeat(65)])('rejects REDIS_PREFIX=%j', (prefix) => {
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_PREFIX: prefix })).toEqual([
      'REDIS_PREFIX: Expected 1–64 characters without spaces, { or }.',
    ]);
  });

  it('refuses REDIS_PREFIX without Redis rather than ignoring it', () => {
    expect(problems({ REDIS_PREFIX: 'acme:' })).toEqual([
      'REDIS_PREFIX: Only used with REDIS_URL or REDIS_CLUSTER_NODES, and neither is set.',
    ]);
  });

  it('never quotes a Redis URL, which may hold a password', () => {
    expect(problems({ REDIS_URL: 'http://user:hunter2@x' }).join()).not.toContain('hunter2');
    expect(describeRedis({ url: 'redis://user:hunter2@x:6379/1', prefix: 'p:' })).toBe(
      'Redis redis://user:***@x:6379/1',
    );
    expect(
      describeRedis({
        clusterNodes: [
          { host: 'a', port: 1 },
          { host: '::1', port: 2 },
        ],
        prefix: 'p:',
      }),
    ).toBe('Redis Cluster a:1,[::1]:2');
  });

  it('RATE_LIMIT_FAILURE is open or closed', () => {
    expect(loadConfig({ RATE_LIMIT_FAILURE: 'closed' }).rateLimitFailure).toBe('closed');
    expect(loadConfig({ RATE_LIMIT_FAILURE: '' }).rateLimitFailure).toBe('open');
    expect(problems({ RATE_LIMIT_FAILURE: 'sometimes' })).toEqual(['RATE_LIMIT_FAILURE: Expected open or closed.']);
  });

  it('DATABASE_URL with its settings; DATA_DIR; defaults migrate auto and schema parley', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:secret@db:5432/app' }).database).toEqual({
      connectionString: 'postgres://u:secret@db:5432/app',
      migrate: 'auto',
      schema: 'parley',
    });
    expect(
      loadConfig({
        DATABASE_URL: 'postgresql://db/app',
        DATABASE_MIGRATE: 'off',
        PARLEY_SCHEMA: 'tenant_a',
        DATABASE_POOL_SIZE: '25',
        DATABASE_STATEMENT_TIMEOUT_MS: '2000',
        DATABASE_LISTEN_URL: 'postgres://direct/app',
      }).database,
    ).toEqual({
      connectionString: 'postgresql://db/app',
      migrate: 'off',
      schema: 'tenant_a',
      poolSize: 25,
      statementTimeoutMs: 2000,
      listenUrl: 'postgres://direct/app',
    });
    expect(loadConfig({ DATA_DIR: './parley-data' }).database).toEqual({
      dataDir: './parley-data',
      migrate: 'auto',
      schema: 'parley',
    });
    expect(loadConfig({}).database).toBeUndefined();
  });

  it('refuses two storage backends at once, naming them, and never quotes a URL', () => {
    const found = problems({
      DATABASE_URL: 'postgres://u:secret@db/app',
      DATA_DIR: './d',
      REDIS_URL: 'redis://u:secret@r:6379',
    });
    expect(found).toEqual([
      expect.stringMatching(/^REDIS_URL, DATABASE_URL, DATA_DIR: Set one storage backend, not 3/),
    ]);
    expect(problems({ REDIS_CLUSTER_NODES: 'a:1', DATA_DIR: './d' })).toEqual([
      expect.stringMatching(/^REDIS_CLUSTER_NODES, DATA_DIR: Set one/),
    ]);
    expect(() => loadStorageConfig({ DATABASE_URL: 'postgres://db/app', REDIS_URL: 'redis://r:6379' })).toThrow(
      /REDIS_URL, DATABASE_URL: Set one storage backend/,
    );
    expect(JSON.stringify(found)).not.toContain('secret');
  });

  it('checks the database variables, and refuses them without a database', () => {
    expect(
      problems({
        DATABASE_URL: 'mysql://db/app',
        DATABASE_MIGRATE: 'yes',
        PARLEY_SCHEMA: 'Bad-Name',
        DATABASE_POOL_SIZE: '0',
        DATABASE_STATEMENT_TIMEOUT_MS: '5',
      }),
    ).toEqual([
      'DATABASE_URL: Expected a postgres:// or postgresql:// URL.',
      'DATABASE_MIGRATE: Expected auto or off.',
      expect.stringMatching(/^PARLEY_SCHEMA: Expected a lower-case identifier/),
      'DATABASE_POOL_SIZE: Expected an integer from 1 to 1000.',
      'DATABASE_STATEMENT_TIMEOUT_MS: Expected an integer from 100 to 3600000 (ms).',
    ]);
    expect(problems({ PARLEY_SCHEMA: 'x' })).toEqual([
      'PARLEY_SCHEMA: Only used with DATABASE_URL or DATA_DIR, and neither is set.',
    ]);
    expect(problems({ DATA_DIR: './d', DATABASE_POOL_SIZE: '5' })).toEqual([
      expect.stringMatching(/^DATABASE_POOL_SIZE: Only used with DATABASE_URL/),
    ]);
    expect(
      describeDatabase({ connectionString: 'postgres://u:secret@db/app', migrate: 'auto', schema: 'parley' }),
    ).toBe('PostgreSQL postgres://u:***@db/app');
  });

  it('loadRedisConfig reads only the Redis variables (parley keys ignores the rest)', () => {
    expect(loadRedisConfig({ REDIS_URL: 'redis://a:6379', PORT: 'not a port', API_KEYS: '[' })).toEqual({
      url: 'redis://a:6379',
      prefix: 'parley:',
    });
    expect(loadRedisConfig({})).toBeUndefined();
    expect(() => loadRedisConfig({ REDIS_CLUSTER_NODES: 'nope' })).toThrow(ConfigError);
  });
});
