/**
 * @module Strings no backend stores (U+0000, unpaired surrogates) given to core's services directly,
 * as an embedder does: refused with `validation_failed` at their paths, nothing stored. The HTTP
 * routes on every backend are covered by packages/http/src/app/unstorable-strings.test.ts.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { assertStorableStrings, createCore, type ParleyError } from './index.js';
import { rejection } from './test-support/errors.js';
import { storableJson, storableText } from './validation.js';

const issuesOf = (error: ParleyError) => error.details?.['issues'];
const VALUE = 'Must not contain U+0000 or an unpaired surrogate.';
const KEY = 'A key must not contain U+0000 or an unpaired surrogate.';

function thrown(call: () => void): ParleyError {
  try {
    call();
  } catch (error) {
    return error as ParleyError;
  }
  throw new Error('Expected a throw.');
}

describe('strings no backend stores, given to the services directly', () => {
  it('are refused in bodies and queries, lone surrogates too (no URL carries one; an embedder can)', async () => {
    const adapters = memoryAdapters();
    const core = createCore(adapters);
    const agent = await core.agents.create(
      { workspaceId: 'ws1' },
      { name: 'Ada', description: 'helper', model: 'modelA-4' },
    );
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id, userId: 'u1' });
    const refusals = [
      [
        core.agents.create({ workspaceId: 'ws1' }, { name: 'Ada\ud800', description: 'helper', model: 'modelA-4' }),
        'name',
      ],
      [
        core.agents.update({ workspaceId: 'ws1' }, agent.id, { configuration: { notes: ['ok', 'b\udc00'] } }),
        'configuration.notes.1',
      ],
      [core.conversations.list({ workspaceId: 'ws1' }, { userId: '\ud800' }), 'userId'],
      [
        core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { metadata: { a: { ['\u0000']: 1 } } }),
        'metadata.a',
        KEY,
      ],
      [
        core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'hi \u0000' }),
        'content',
      ],
      [core.events.list({ workspaceId: 'ws1' }, { after: '\udfff' }), 'after'],
    ] as const;
    for (const [call, path, message = VALUE] of refusals) {
      const error = await rejection(call);
      expect(error.code, path).toBe('validation_failed');
      expect(issuesOf(error), path).toEqual([{ path, message }]);
    }
    expect(await core.agents.get({ workspaceId: 'ws1' }, agent.id)).toEqual({ ...agent });
    expect((await core.conversations.list({ workspaceId: 'ws1' })).total).toBe(1);
    expect((await core.events.list({ workspaceId: 'ws1' })).events.map((event) => event.type)).toEqual([
      'agent.created',
      'conversation.started',
    ]);
  });

  it('a well-formed pair, other control characters and a U+FFFD pass', () => {
    expect(() => assertStorableStrings({ text: '😀 \ud83d\ude00 \u0001 \ufffd', ['k😀']: ['\t'] })).not.toThrow();
  });

  // A bad key is reported at its object, nothing below it; then the values in order; at most 100 issues.
  it('reports bad keys at their object, then values in order, at most 100, through 500 000 levels', () => {
    expect(
      issuesOf(thrown(() => assertStorableStrings({ a: '\u0000', ['\ud800']: { b: ['x', '\udc00'] }, c: '\u0000' }))),
    ).toEqual([
      { path: '', message: KEY },
      { path: 'a', message: VALUE },
      { path: 'c', message: VALUE },
    ]);
    expect(
      issuesOf(thrown(() => assertStorableStrings({ list: Array.from({ length: 10_000 }, () => '\u0000') }))),
    ).toHaveLength(100);
    const deep = JSON.parse('['.repeat(500_000) + '"\\u0000"' + ']'.repeat(500_000)) as unknown;
    expect(issuesOf(thrown(() => assertStorableStrings(deep)))).toEqual([
      { path: Array.from({ length: 500_000 }, () => '0').join('.'), message: VALUE },
    ]);
  });
});

describe('strings servers produce: repaired, not refused', () => {
  it('replaces U+0000 and each unpaired surrogate with U+FFFD, keeping pairs and other text', () => {
    const repaired = storableText('a\u0000b\ud800c\udc00d\udc00\ud800 😀 \u0001');
    expect(repaired).toBe('a\ufffdb\ufffdc\ufffdd\ufffd\ufffd 😀 \u0001');
    const clean = 'plain 😀';
    expect(storableText(clean)).toBe(clean);
  });

  it('repairs every string of a JSON value, keys included, and leaves other values as they are', () => {
    const value = { ['k\u0000']: ['\ud800', 1, null, true, { inner: 'x\u0000' }], n: 2.5 };
    expect(storableJson(value)).toEqual({ ['k\ufffd']: ['\ufffd', 1, null, true, { inner: 'x\ufffd' }], n: 2.5 });
    expect(storableJson('\u0000')).toBe('\ufffd');
    expect(storableJson(null)).toBeNull();
  });
});
