/**
 * @module Property-based hostile input (fast-check) against every route of the app's own OpenAPI
 * document: generated methods, path ids, queries, headers and bodies. Properties: never a 5xx;
 * every error in its shape (flat under /sandbox); a rejected request changes no stored state;
 * prototypes stay clean. Seeded and bounded for `npm test`; `npm run fuzz` runs it long
 * (`FUZZ_RUNS`, `FUZZ_SEED`).
 */
import { memoryAdapters } from '@parley/adapter-memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { harness, type Harness } from '../test-support/harness.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1_500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'] as const;

interface Operation {
  method: string;
  /** OpenAPI path template, e.g. `/api/agents/{id}`. */
  path: string;
}

interface World {
  h: Harness;
  operations: Operation[];
  /** Ids that exist in the workspace, so generated requests reach past the 404s. */
  ids: string[];
}

/** A workspace with one of everything, and the operations the app documents. */
async function world(): Promise<World> {
  // A plan limit the run never reaches: the properties are about input, not rate limits.
  const h = await harness({}, memoryAdapters(), { plans: { pro: { limit: 3_000_000, periodMs: 3_600_000 } } });
  const agent = (await (
    await h.call('POST', '/api/agents', { json: { name: 'A', description: 'd', model: 'modelA-4' } })
  ).json()) as { id: string };
  const conversation = (await (await h.call('POST', '/api/conversations', { json: { agentId: agent.id } })).json()) as {
    id: string;
  };
  await h.call('POST', `/api/conversations/${conversation.id}/messages`, { json: { role: 'user', content: 'hello' } });
  const webhook = (await (
    await h.call('POST', '/api/webhooks', { json: { url: 'https://example.com/h', events: ['agent.created'] } })
  ).json()) as { id: string };
  const document = (await (await h.app.request('/openapi.json')).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => (METHODS as readonly string[]).includes(method.toUpperCase()))
      .map((method) => ({ method: method.toUpperCase(), path })),
  );
  return { h, operations, ids: [agent.id, conversation.id, webhook.id, '1', '2'] };
}

/** Everything readable in the workspace, through the API's own list and read routes. */
async function snapshot({ h, operations }: World): Promise<string> {
  const lists = operations.filter(
    (op) => op.method === 'GET' && !op.path.includes('{') && /^\/(api|sandbox)\//.test(op.path),
  );
  const parts: unknown[] = [];
  for (const { path } of lists) {
    const body = (await (await h.call('GET', `${path}?limit=100`)).json()) as Record<string, unknown>;
    parts.push(path, body);
    for (const conversation of (body.conversations as Array<{ id: string }> | undefined) ?? []) {
      parts.push(await (await h.call('GET', `/api/conversations/${conversation.id}/messages?limit=100`)).json());
    }
  }
  return JSON.stringify(parts);
}

const hostileString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\ud800',
    'a\udfffb',
    '__proto__',
    'constructor',
    'prototype',
    '%00',
    '../..',
    '%2F',
    'null',
    '-1',
    '1e309',
    '0x10',
    'NaN',
  ),
  fc.string({ minLength: 2_000, maxLength: 20_000 }).map((s) => s.padEnd(2_000, 'x')),
);

const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -1, 0, 2.5, 1e308, true, false, null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A body that is nearly right for some route: real field names, hostile values. */
const fieldNames = [
  'name',
  'description',
  'model',
  'systemPrompt',
  'temperature',
  'maxTokens',
  'configuration',
  'tools',
  'maxSteps',
  'autoReply',
  'status',
  'agentId',
  'userId',
  'metadata',
  'content',
  'role',
  'url',
  'events',
  'secret',
  'enabled',
  'id',
  'tag',
  'since',
  'until',
  'eventType',
];
const nearlyRight = fc.dictionary(fc.constantFrom(...fieldNames, '__proto__', 'extra'), hostileValue, { maxKeys: 6 });

const deep = fc.integer({ min: 10, max: 3_000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

const body = fc.oneof(
  fc.constant(undefined),
  nearlyRight.map((value) => JSON.stringify(value)),
  hostileValue.map((value) => JSON.stringify(value) ?? 'undefined'),
  fc.constantFrom(
    '{"__proto__": {"polluted": true}}',
    '{"constructor": {"prototype": {"polluted": true}}}',
    '{',
    '{"a":1,}',
    'null',
    '[]',
    '"\\ud800"',
    '\u0000',
    '{"name":"\\ud800"}',
  ),
  deep,
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json, text/plain',
  '',
  undefined,
);

const queryKeys = fc.constantFrom(
  'page',
  'limit',
  'status',
  'before',
  'after',
  'agentId',
  'userId',
  'type',
  'eventId',
  '__proto__',
  'x',
);
const query = fc.dictionary(queryKeys, fc.oneof(hostileString, fc.integer().map(String)), { maxKeys: 3 });

/** `arbitrary`'s value once in `every` draws, `null` otherwise. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, every: number) =>
  fc.oneof({ arbitrary: fc.constant(null), weight: every - 1 }, { arbitrary, weight: 1 });

const request = (operations: Operation[], ids: string[]) =>
  fc.record({
    operation: fc.constantFrom(...operations),
    method: sometimes(fc.constantFrom(...METHODS), 5),
    ids: fc.array(fc.oneof(fc.constantFrom(...ids), hostileString), { minLength: 3, maxLength: 3 }),
    query,
    body,
    contentType,
    contentEncoding: sometimes(fc.constantFrom('gzip', 'br', 'identity', 'x-unknown'), 6),
    key: sometimes(fc.constantFrom('garbage', 'Bearer', '', 'prl_' + 'x'.repeat(40)), 10),
  });

type GeneratedRequest = ReturnType<ReturnType<typeof request>['generate']>['value'];

/** Percent-encodes a path segment; a lone surrogate (no UTF-8 form) becomes invalid UTF-8 bytes. */
const segment = (value: string) =>
  value.replace(/(\p{Cs})|\P{Cs}+/gu, (run, lone?: string) =>
    lone === undefined ? encodeURIComponent(run) : '%ED%A0%80',
  );

function toPath(template: string, ids: string[]): string {
  let index = 0;
  return template.replace(/\{[^}]+\}/g, () => segment(ids[index++ % ids.length] ?? 'x'));
}

async function send(h: Harness, r: GeneratedRequest): Promise<{ path: string; method: string; response: Response }> {
  const method = r.method ?? r.operation.method;
  const search = new URLSearchParams(Object.entries(r.query)).toString();
  const path = toPath(r.operation.path, r.ids) + (search ? `?${search}` : '');
  const headers: Record<string, string> = {};
  if (r.contentType !== undefined) headers['Content-Type'] = r.contentType;
  if (r.contentEncoding !== null) headers['Content-Encoding'] = r.contentEncoding;
  const withBody = r.body !== undefined && method !== 'GET' && method !== 'HEAD';
  const response = await h.call(method, path, {
    ...(r.key !== null && { key: r.key }),
    ...(withBody && { raw: r.body }),
    headers,
  });
  return { path, method, response };
}

describe('hostile input on every documented route (fast-check)', () => {
  it('never answers 5xx, always in its error shape, and a rejected request changes nothing', async () => {
    const w = await world();
    expect(w.operations.length).toBeGreaterThan(10);
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    await fc.assert(
      fc.asyncProperty(request(w.operations, w.ids), async (r) => {
        const before = await snapshot(w);
        const { path, method, response } = await send(w.h, r);
        const context = `${method} ${path} → ${response.status}`;
        expect(response.status, context).toBeLessThan(500);
        // A live stream that was admitted stays open: hang up, as a client would.
        if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
          await response.body?.cancel();
          return;
        }
        const text = await response.text();
        if (response.status >= 400 && method !== 'HEAD') {
          const parsed = JSON.parse(text) as { error: unknown; message?: unknown };
          if (path.startsWith('/sandbox/')) {
            expect(parsed, context).toEqual({ error: response.status, message: expect.any(String) });
          } else {
            expect(parsed.error, context).toEqual(
              expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
            );
          }
          expect(await snapshot(w), `${context} changed stored state`).toBe(before);
        }
        expect(({} as Record<string, unknown>).polluted, context).toBeUndefined();
        expect(Object.getOwnPropertyNames(Object.prototype).sort(), context).toEqual(prototypeKeys);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 120_000);
});
