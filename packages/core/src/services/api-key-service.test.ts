/** @module ApiKeyService on the memory key store: issue, authenticate, list, revoke and scopes. */
import { createHash } from 'node:crypto';
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, hasScope, hashApiKey, type Principal } from '../index.js';
import { ManualClock } from '../testing/clock.js';

const START = '2026-01-01T00:00:00.000Z';

function setup() {
  const adapters = memoryAdapters();
  const core = createCore({ ...adapters, clock: new ManualClock(Date.parse(START)) });
  return { core, store: adapters.apiKeys };
}

describe('ApiKeyService', () => {
  it('issues a prl_ key whose authentication yields its principal', async () => {
    const { core } = setup();
    const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
    expect(key).toMatch(/^prl_[A-Za-z0-9_-]{43}$/);
    expect(record).toEqual({ keyId: record.keyId, workspaceId: 'ws1', plan: 'pro', scopes: ['*'], hash: hashApiKey(key), createdAt: START });
    expect(record.keyId).toMatch(/^key_/);
    expect(await core.apiKeys.authenticate(key)).toEqual({ keyId: record.keyId, workspaceId: 'ws1', plan: 'pro', scopes: ['*'] });
  });

  it('keeps a given key, its scopes and an enterprise limitPerHour', async () => {
    const { core } = setup();
    const { key, record } = await core.apiKeys.issue(
      { workspaceId: 'ws9', plan: 'enterprise', scopes: ['agents:read', 'plants:write'], limitPerHour: 25_000 },
      'prl_configured-key',
    );
    expect(key).toBe('prl_configured-key');
    const principal: Principal = { keyId: record.keyId, workspaceId: 'ws9', plan: 'enterprise', scopes: ['agents:read', 'plants:write'], limitPerHour: 25_000 };
    expect(await core.apiKeys.authenticate('prl_configured-key')).toEqual(principal);
  });

  it('answers null for unknown, empty and almost-right keys', async () => {
    const { core } = setup();
    const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'free' });
    const flipped = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    for (const candidate of ['prl_unknown', '', flipped, key.toUpperCase(), ` ${key}`, `${key}\n`]) {
      expect(await core.apiKeys.authenticate(candidate), JSON.stringify(candidate)).toBeNull();
    }
  });

  it('stores only the SHA-256 hash of the key, never the key itself', async () => {
    const { core, store } = setup();
    const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
    const stored = await store.list();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(stored[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(key.slice('prl_'.length));
    expect(await store.findByHash(hashApiKey(key))).toEqual(stored[0]);
  });

  it('lists keys by workspace and revokes them', async () => {
    const { core } = setup();
    const first = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
    const second = await core.apiKeys.issue({ workspaceId: 'ws2', plan: 'free' });
    const third = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro', scopes: [] });
    expect((await core.apiKeys.list('ws1')).map((record) => record.keyId)).toEqual([first.record.keyId, third.record.keyId]);
    expect(await core.apiKeys.list()).toHaveLength(3);

    expect(await core.apiKeys.revoke(first.record.keyId)).toBe(true);
    expect(await core.apiKeys.authenticate(first.key)).toBeNull();
    expect(await core.apiKeys.revoke(first.record.keyId)).toBe(false);
    expect(await core.apiKeys.revoke('key_unknown')).toBe(false);
    expect((await core.apiKeys.authenticate(second.key))?.workspaceId).toBe('ws2');
    expect((await core.apiKeys.list('ws1')).map((record) => record.keyId)).toEqual([third.record.keyId]);
  });

  it('grants scopes directly or through *, and nothing for an empty list', () => {
    const principal = (scopes: Principal['scopes']): Principal => ({ keyId: 'key_1', workspaceId: 'ws1', plan: 'pro', scopes });
    expect(hasScope(principal(['*']), 'webhooks:write')).toBe(true);
    expect(hasScope(principal(['agents:read']), 'agents:read')).toBe(true);
    expect(hasScope(principal(['agents:read']), 'agents:write')).toBe(false);
    expect(hasScope(principal([]), 'plants:read')).toBe(false);
  });
});
