/**
 * @module Strings no backend can store the same way (docs/errors.md#strings): U+0000 and unpaired
 * surrogates in every string field of every route — bodies (nested `metadata` / `configuration`
 * values and keys included), query parameters and path ids — on memory, Redis, PostgreSQL and
 * PGlite in a data folder (the `DATA_DIR` mode). Each is 400 `validation_failed` at its path on
 * every backend; nothing is stored and no 5xx is logged (issue: PostgreSQL and `DATA_DIR` answered
 * 500 where memory and Redis stored them).
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { postgresAdapters } from '@parley/adapter-postgres';
import {
  createTestDatabase,
  createTestPglite,
  describeIfPostgres,
  probePostgres,
  type TestDatabase,
  type TestPglite,
} from '@parley/adapter-postgres/testing';
import { redisAdapters } from '@parley/adapter-redis';
import type { Adapters } from '@parley/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, captureLogs, harness, json, type Harness } from '../test-support/harness.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';

/** What a refused string's issue says (a key's issue is at the path of the object holding it). */
const VALUE_MESSAGE = 'Must not contain U+0000 or an unpaired surrogate.';
const KEY_MESSAGE = 'A key must not contain U+0000 or an unpaired surrogate.';

/** The two kinds of string, each as JSON sends it: an escape (`JSON.stringify` writes both so). */
const STRINGS = [
  { name: 'U+0000', value: '\u0000', escape: '\\u0000' },
  { name: 'a lone surrogate', value: '\ud800', escape: '\\ud800' },
] as const;

interface Ids {
  agent: string;
  conversation: string;
  message: string;
  webhook: string;
}

/** One request and where its issue is: `key` when the bad string is a key, else a value. */
interface Case {
  method: string;
  path: string;
  body?: unknown;
  issue: string;
  key?: boolean;
}

const SECRET = 'a-secret-of-16-chars';

/** Every string field of every route's body, holding `s` (with a valid rest, so only `s` is wrong). */
function bodyCases(s: string, { agent, conversation, webhook }: Ids): Case[] {
  const agentFields: Array<[string, unknown, string, boolean?]> = [
    ['name', s, 'name'],
    ['name', `Ada${s}`, 'name'],
    ['description', s, 'description'],
    ['systemPrompt', `Be brief.${s}`, 'systemPrompt'],
    ['model', s, 'model'],
    ['toolsSecret', SECRET + s, 'toolsSecret'],
    ['configuration', { depth: 2, note: s }, 'configuration.note'],
    ['configuration', { nested: { list: ['ok', s] } }, 'configuration.nested.list.1'],
    ['configuration', { [`de${s}pth`]: 2 }, 'configuration', true],
    ['configuration', { nested: { [s]: 'x' } }, 'configuration.nested', true],
  ];
  const metadata: Array<[unknown, string, boolean?]> = [
    [{ note: s }, 'metadata.note'],
    [{ a: { b: [1, `x${s}`] } }, 'metadata.a.b.1'],
    [{ [s]: 1 }, 'metadata', true],
  ];
  const messages = `/api/conversations/${conversation}/messages`;
  const toolResults = `/api/conversations/${conversation}/tool-results`;
  return [
    ...agentFields.map(([field, value, issue, key]) => ({
      method: 'POST',
      path: '/api/agents',
      body: { ...agentInput, [field]: value },
      issue,
      key,
    })),
    ...agentFields.map(([field, value, issue, key]) => ({
      method: 'PATCH',
      path: `/api/agents/${agent}`,
      body: { [field]: value },
      issue,
      key,
    })),
    { method: 'PATCH', path: `/api/agents/${agent}`, body: { status: s }, issue: 'status' },
    { method: 'POST', path: '/api/agents', body: { ...agentInput, [`x${s}`]: 1 }, issue: '', key: true },
    { method: 'POST', path: '/api/conversations', body: { agentId: s }, issue: 'agentId' },
    { method: 'POST', path: '/api/conversations', body: { agentId: `${agent}${s}` }, issue: 'agentId' },
    { method: 'POST', path: '/api/conversations', body: { agentId: agent, userId: s }, issue: 'userId' },
    ...metadata.map(([value, issue, key]) => ({
      method: 'POST',
      path: '/api/conversations',
      body: { agentId: agent, metadata: value },
      issue,
      key,
    })),
    ...metadata.map(([value, issue, key]) => ({
      method: 'PATCH',
      path: `/api/conversations/${conversation}`,
      body: { metadata: value },
      issue,
      key,
    })),
    { method: 'PATCH', path: `/api/conversations/${conversation}`, body: { status: s }, issue: 'status' },
    { method: 'POST', path: messages, body: { role: 'user', content: s }, issue: 'content' },
    { method: 'POST', path: messages, body: { role: 'user', content: `hello ${s} there` }, issue: 'content' },
    { method: 'POST', path: messages, body: { role: s, content: 'hello' }, issue: 'role' },
    ...metadata.map(([value, issue, key]) => ({
      method: 'POST',
      path: messages,
      body: { role: 'user', content: 'hello', metadata: value },
      issue,
      key,
    })),
    {
      method: 'POST',
      path: toolResults,
      body: { results: [{ toolCallId: s, output: 1 }] },
      issue: 'results.0.toolCallId',
    },
    {
      method: 'POST',
      path: toolResults,
      body: { results: [{ toolCallId: 'call_1', output: { text: s } }] },
      issue: 'results.0.output.text',
    },
    {
      method: 'POST',
      path: toolResults,
      body: { results: [{ toolCallId: 'call_1', output: s }] },
      issue: 'results.0.output',
    },
    {
      method: 'POST',
      path: toolResults,
      body: { results: [{ toolCallId: 'call_1', approved: false, reason: s }] },
      issue: 'results.0.reason',
    },
    {
      method: 'POST',
      path: '/api/webhooks',
      body: { url: `https://example.com/h${s}`, events: ['agent.created'] },
      issue: 'url',
    },
    { method: 'POST', path: '/api/webhooks', body: { url: 'https://example.com/h', events: [s] }, issue: 'events.0' },
    {
      method: 'POST',
      path: '/api/webhooks',
      body: { url: 'https://example.com/h', events: ['agent.created'], secret: SECRET + s },
      issue: 'secret',
    },
    { method: 'PATCH', path: `/api/webhooks/${webhook}`, body: { url: `https://example.com/h${s}` }, issue: 'url' },
    { method: 'PATCH', path: `/api/webhooks/${webhook}`, body: { events: ['agent.created', s] }, issue: 'events.1' },
    { method: 'PATCH', path: `/api/webhooks/${webhook}`, body: { secret: SECRET + s }, issue: 'secret' },
    { method: 'POST', path: `/api/webhooks/${webhook}/recover`, body: { since: s }, issue: 'since' },
    {
      method: 'POST',
      path: `/api/webhooks/${webhook}/recover`,
      body: { since: '2026-01-01T00:00:00.000Z', until: s },
      issue: 'until',
    },
    { method: 'POST', path: `/api/webhooks/${webhook}/test`, body: { eventType: s }, issue: 'eventType' },
    { method: 'POST', path: `/api/webhooks/${webhook}/rotate-secret`, body: { secret: SECRET + s }, issue: 'secret' },
    { method: 'POST', path: '/sandbox/plants', body: { id: 99, name: s }, issue: 'name' },
    { method: 'POST', path: '/sandbox/plants', body: { id: 99, name: 'Fern', tag: `fern${s}` }, issue: 'tag' },
  ];
}

/**
 * Every query parameter and path id holding U+0000 (`%00`). A lone surrogate has no UTF-8 form, so
 * it cannot arrive in a URL: its percent-encoded bytes are invalid UTF-8 and stay undecoded.
 */
function urlCases({ agent, conversation, message, webhook }: Ids): Case[] {
  const valid = {
    agent: { name: 'Ada' },
    conversation: { metadata: {} },
    message: { role: 'user', content: 'hello' },
    toolResults: { results: [{ toolCallId: 'call_1', output: 1 }] },
  };
  const queries: Array<[string, string]> = [
    ['/api/agents', 'status'],
    ['/api/agents', 'page'],
    ['/api/conversations', 'agentId'],
    ['/api/conversations', 'userId'],
    ['/api/conversations', 'status'],
    [`/api/conversations/${conversation}/messages`, 'before'],
    [`/api/conversations/${conversation}/messages`, 'after'],
    [`/api/conversations/${conversation}/messages`, 'limit'],
    [`/api/conversations/${conversation}/stream`, 'after'],
    ['/api/webhooks', 'limit'],
    [`/api/webhooks/${webhook}/deliveries`, 'before'],
    [`/api/webhooks/${webhook}/deliveries`, 'eventId'],
    ['/api/events', 'after'],
    ['/api/events', 'type'],
    ['/api/usage', 'from'],
    ['/api/usage', 'groupBy'],
    ['/sandbox/plants', 'limit'],
  ];
  const ids: Array<[string, string, unknown?]> = [
    ['GET', '/api/agents/x%00'],
    ['PATCH', '/api/agents/%00', valid.agent],
    ['DELETE', '/api/agents/%00'],
    ['GET', '/api/conversations/%00'],
    ['PATCH', '/api/conversations/%00', valid.conversation],
    ['DELETE', '/api/conversations/%00'],
    ['POST', '/api/conversations/%00/messages', valid.message],
    ['GET', '/api/conversations/%00/messages'],
    ['GET', `/api/conversations/%00/messages/${message}`],
    ['POST', '/api/conversations/%00/reply'],
    ['GET', '/api/conversations/%00/stream'],
    ['POST', '/api/conversations/%00/tool-results', valid.toolResults],
    ['GET', '/api/webhooks/%00'],
    ['PATCH', '/api/webhooks/%00', { enabled: true }],
    ['DELETE', '/api/webhooks/%00'],
    ['GET', '/api/webhooks/%00/deliveries'],
    ['POST', '/api/webhooks/%00/recover', { since: '2026-01-01T00:00:00.000Z' }],
    ['POST', '/api/webhooks/%00/test', { eventType: 'agent.created' }],
    ['POST', '/api/webhooks/%00/rotate-secret', {}],
    ['GET', '/api/events/evt_%00'],
    ['DELETE', '/sandbox/plants/%00'],
  ];
  return [
    ...queries.map(([path, name]) => ({ method: 'GET', path: `${path}?${name}=x%00y`, issue: name })),
    { method: 'GET', path: '/api/agents?x%00=1', issue: '', key: true },
    ...ids.map(([method, path, body]) => ({ method, path, body, issue: 'id' })),
    { method: 'GET', path: `/api/conversations/${conversation}/messages/msg_%00`, issue: 'messageId' },
    { method: 'POST', path: `/api/webhooks/${webhook}/deliveries/%00/retry`, issue: 'deliveryId' },
    { method: 'PATCH', path: `/api/agents/${agent}%00`, body: valid.agent, issue: 'id' },
  ];
}

/** Everything the workspace holds, read through the API (the sandbox's plants seeded by the first read). */
async function snapshot(h: Harness, { conversation, webhook }: Ids): Promise<unknown[]> {
  const paths = [
    '/api/agents?limit=100',
    '/api/conversations?limit=100',
    `/api/conversations/${conversation}/messages?limit=100`,
    '/api/webhooks?limit=100',
    `/api/webhooks/${webhook}/deliveries?limit=100`,
    '/api/events?limit=100',
    '/sandbox/plants',
  ];
  return Promise.all(paths.map(async (path) => [path, await json(await h.call('GET', path))]));
}

/** Sends `c` with its body as raw JSON text (where `s` is an escape), answering what went wrong, or `null`. */
async function send(h: Harness, c: Case, s: (typeof STRINGS)[number] | undefined): Promise<string | null> {
  const raw = c.body === undefined ? undefined : JSON.stringify(c.body);
  // JSON.stringify writes U+0000 and lone surrogates as escapes: the body is ASCII JSON.
  if (s !== undefined && raw !== undefined && !raw.includes(s.escape))
    return `${c.method} ${c.path}: body lacks ${s.escape}`;
  const response = await h.call(
    c.method,
    c.path,
    raw === undefined ? {} : { raw, headers: { 'Content-Type': 'application/json' } },
  );
  const text = await response.text();
  const where = `${c.method} ${c.path} ${raw ?? ''} → ${response.status} ${text}`;
  if (response.status !== 400) return where;
  const message = c.key ? KEY_MESSAGE : VALUE_MESSAGE;
  const body = JSON.parse(text) as {
    error: number | { code: string; details?: { issues?: Array<{ path: string; message: string }> } };
    message?: string;
  };
  if (c.path.startsWith('/sandbox/')) {
    // Flat errors: the message names the path, as the API's `details.issues` do.
    const expected = c.issue ? `${c.issue}: ${message}` : message;
    return body.error === 400 && body.message?.includes(expected) ? null : where;
  }
  if (typeof body.error !== 'object' || body.error.code !== 'validation_failed') return where;
  return body.error.details?.issues?.some((issue) => issue.path === c.issue && issue.message === message)
    ? null
    : where;
}

function unstorableStringTests(open: (logger: ReturnType<typeof captureLogs>['logger']) => Promise<Harness>): void {
  it('every field, parameter and id: 400 validation_failed at its path, nothing stored, no 5xx logged', async () => {
    const logs = captureLogs();
    const h = await open(logs.logger);
    const agent = await json(await h.call('POST', '/api/agents', { json: agentInput }));
    const conversation = await json(
      await h.call('POST', '/api/conversations', { json: { agentId: agent.id, userId: 'u1', metadata: { a: 1 } } }),
    );
    const message = await json(
      await h.call('POST', `/api/conversations/${conversation.id}/messages`, {
        json: { role: 'user', content: 'hello' },
      }),
    );
    const webhook = await json(
      await h.call('POST', '/api/webhooks', { json: { url: 'https://example.com/h', events: ['agent.created'] } }),
    );
    const ids: Ids = { agent: agent.id, conversation: conversation.id, message: message.id, webhook: webhook.id };
    expect(Object.values(ids).every((id) => typeof id === 'string')).toBe(true);
    const before = await snapshot(h, ids);

    const failures: string[] = [];
    let sent = 0;
    for (const s of STRINGS) {
      for (const c of bodyCases(s.value, ids)) {
        sent += 1;
        const failure = await send(h, c, s);
        if (failure !== null) failures.push(`[${s.name}] ${failure}`);
      }
    }
    for (const c of urlCases(ids)) {
      sent += 1;
      const failure = await send(h, c, undefined);
      if (failure !== null) failures.push(`[URL] ${failure}`);
    }
    expect(failures, `${failures.length} of ${sent} requests`).toEqual([]);
    expect(await snapshot(h, ids)).toEqual(before);
    const serverErrors = logs.lines.filter((line) => (line.level as number) >= 50 || (line.status as number) >= 500);
    expect(serverErrors).toEqual([]);
  }, 120_000);
}

/** An app over `adapters` logging to `logger`, with a plan the run cannot exhaust. */
const over = (adapters: Adapters) => (logger: ReturnType<typeof captureLogs>['logger']) =>
  harness({ logger }, adapters, { plans: { pro: { limit: 1_000_000, periodMs: 3_600_000 } } });

describe('unstorable strings in memory', () => {
  unstorableStringTests((logger) => over(memoryAdapters())(logger));
});

describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis())('unstorable strings on Redis', () => {
  const prefix = uniquePrefix('strings');
  let client: Redis;
  let adapters: Adapters;
  beforeAll(() => {
    client = new Redis(REDIS_URL);
    adapters = redisAdapters({ client, prefix });
  });
  afterAll(async () => {
    await deletePrefix(client, prefix);
    await client.quit();
  });
  unstorableStringTests((logger) => over(adapters)(logger));
});

describeIfPostgres({ describe, it }, await probePostgres())('unstorable strings on PostgreSQL', () => {
  let database: TestDatabase;
  let adapters: Adapters;
  beforeAll(async () => {
    database = await createTestDatabase();
    adapters = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
    await adapters.ready(60_000);
  }, 60_000);
  afterAll(async () => {
    await adapters?.close();
    await database?.drop();
  });
  unstorableStringTests((logger) => over(adapters)(logger));
});

describe('unstorable strings on PGlite in a data folder (DATA_DIR)', () => {
  let pglite: TestPglite;
  let adapters: Adapters;
  beforeAll(async () => {
    pglite = await createTestPglite({ onDisk: true });
    adapters = postgresAdapters({ pglite: pglite.db, sweepIntervalMs: 0 });
    await adapters.ready(60_000);
  }, 120_000);
  afterAll(async () => {
    await adapters?.close();
    await pglite?.close();
  });
  unstorableStringTests((logger) => over(adapters)(logger));
});
