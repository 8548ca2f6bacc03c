/** @module ApiKeyService on the memory key store: issue, authenticate, list, revoke and scopes. */
import { createHash } from 'node:crypto';
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { MemoryApiKeyStore } from '@parley/adapter-memory';
import { API_KEY_CACHE_SIZE, API_KEY_CACHE_TTL_MS } from './api-key-service.js';
import { API_KEY_PREFIX } from './api-key-format.js';
import {
  apiKeyChecksumFails,
  createCore,
  generateApiKey,
  hasScope,
  hashApiKey,
  type ApiKeyRecord,
  type Principal,
} from '../index.js';
import { ManualClock } from '../testing/clock.js';

const START = '2026-01-01T00:00:00.000Z';

function setup() {
  const adapters = memoryAdapters();
  const core = createCore(adapters, { clock: new ManualClock(Date.parse(START)) });
  return { core, store: adapters.apiKeys };
}

describe('ApiKeyService', () => {
  it('issues a prl_ key whose authentication yields its principal', async () => {
    const { core } = setup();
    const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
    expect(key).toMatch(/^prl_[A-Za-z0-9]{36}$/);
    expect(apiKeyChecksumFails(key)).toBe(false);
    expect(record).toEqual({
      keyId: record.keyId,
      workspaceId: 'ws1',
      plan: 'pro',
      scopes: ['*'],
      hash: hashApiKey(key),
      createdAt: START,
    });
    expect(record.keyId).toMatch(/^key_/);
    expect(await core.apiKeys.authenticate(key)).toEqual({
      keyId: record.keyId,
      workspaceId: 'ws1',
      plan: 'pro',
      scopes: ['*'],
    });
  });

  it('keeps a given key, its scopes and an enterprise limitPerHour', async () => {
    const { core } = setup();
    const { key, record } = await core.apiKeys.issue(
      { workspaceId: 'ws9', plan: 'enterprise', scopes: ['agents:read', 'plants:write'], limitPerHour: 25_000 },
      'prl_configured-key',
    );
    expect(key).toBe('prl_configured-key');
    const principal: Principal = {
      keyId: record.keyId,
      workspaceId: 'ws9',
      plan: 'enterprise',
      scopes: ['agents:read', 'plants:write'],
      limitPerHour: 25_000,
    };
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
    expect((await core.apiKeys.list('ws1')).map((record) => record.keyId)).toEqual([
      first.record.keyId,
      third.record.keyId,
    ]);
    expect(await core.apiKeys.list()).toHaveLength(3);

    expect(await core.apiKeys.revoke(first.record.keyId)).toBe(true);
    expect(await core.apiKeys.authenticate(first.key)).toBeNull();
    expect(await core.apiKeys.revoke(first.record.keyId)).toBe(false);
    expect(await core.apiKeys.revoke('key_unknown')).toBe(false);
    expect((await core.apiKeys.authenticate(second.key))?.workspaceId).toBe('ws2');
    expect((await core.apiKeys.list('ws1')).map((record) => record.keyId)).toEqual([third.record.keyId]);
  });

  it('grants scopes directly or through *, and nothing for an empty list', () => {
    const principal = (scopes: Principal['scopes']): Principal => ({
      keyId: 'key_1',
      workspaceId: 'ws1',
      plan: 'pro',
      scopes,
    });
    expect(hasScope(principal(['*']), 'webhooks:write')).toBe(true);
    expect(hasScope(principal(['agents:read']), 'agents:read')).toBe(true);
    expect(hasScope(principal(['agents:read']), 'agents:write')).toBe(false);
    expect(hasScope(principal([]), 'plants:read')).toBe(false);
  });

  describe('checksummed keys', () => {
    /** A memory key store that counts lookups. */
    class CountingStore extends MemoryApiKeyStore {
      lookups = 0;
      override findByHash(hash: string) {
        this.lookups += 1;
        return super.findByHash(hash);
      }
    }

    function counted() {
      const store = new CountingStore();
      return { store, core: createCore({ ...memoryAdapters(), apiKeys: store }) };
    }

    it('a generated key is prl_ + 30 random base62 + a 6-character CRC32 checksum; keys differ', () => {
      const keys = Array.from({ length: 200 }, generateApiKey);
      for (const key of keys) {
        expect(key).toMatch(/^prl_[0-9A-Za-z]{36}$/);
        expect(apiKeyChecksumFails(key)).toBe(false);
      }
      expect(new Set(keys).size).toBe(keys.length);
    });

    it('every single-character typo and a swap of two neighbours fail the checksum', () => {
      const key = generateApiKey();
      const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      for (let i = API_KEY_PREFIX.length; i < key.length; i += 1) {
        for (const replacement of [alphabet[(alphabet.indexOf(key[i]!) + 1) % 62]!, '-', '_']) {
          expect(
            apiKeyChecksumFails(`${key.slice(0, i)}${replacement}${key.slice(i + 1)}`),
            `${i}: ${replacement}`,
          ).toBe(true);
        }
        if (i + 1 < key.length && key[i] !== key[i + 1]) {
          expect(apiKeyChecksumFails(`${key.slice(0, i)}${key[i + 1]}${key[i]}${key.slice(i + 2)}`)).toBe(true);
        }
      }
    });

    it('a key whose checksum fails answers null without any store lookup; a valid one is looked up', async () => {
      const { core, store } = counted();
      const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
      const typo = `${key.slice(0, 10)}${key[10] === 'a' ? 'b' : 'a'}${key.slice(11)}`;
      expect(await core.apiKeys.authenticate(typo)).toBeNull();
      expect(store.lookups).toBe(0);
      expect(await core.apiKeys.authenticate(key)).toMatchObject({ workspaceId: 'ws1' });
      expect(store.lookups).toBe(1);
    });

    it('keys of the earlier format (prl_ + 43 base64url) and keys chosen in API_KEYS keep working', async () => {
      const { core, store } = counted();
      const legacy = 'prl_mR2k-9_xQ0vT7bWc3Lp8Yz1Hn4Jd6Fs5Ga0Ek2Uo9Ir';
      expect(legacy).toHaveLength(47);
      for (const given of [legacy, 'acme-admin-key-0123456789']) {
        await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, given);
        expect(await core.apiKeys.authenticate(given)).toMatchObject({ workspaceId: 'ws1' });
      }
      expect(store.lookups).toBe(2);
    });

    it('refuses to issue a given key in the generated format whose checksum fails, storing nothing', async () => {
      const { core, store } = counted();
      const key = generateApiKey();
      const broken = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
      await expect(core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, broken)).rejects.toMatchObject({
        code: 'validation_failed',
      });
      expect(await store.list()).toEqual([]);
    });
  });

  describe('principal cache (docs/authentication.md#revocation)', () => {
    /** A memory key store that counts lookups and can hold one back until released. */
    class SlowStore extends MemoryApiKeyStore {
      lookups = 0;
      hold: Promise<void> | undefined;
      override async findByHash(hash: string) {
        this.lookups += 1;
        const hold = this.hold;
        const found = await super.findByHash(hash);
        await hold;
        return found;
      }
    }

    function cached() {
      const clock = new ManualClock(Date.parse(START));
      const store = new SlowStore();
      return { clock, store, core: createCore({ ...memoryAdapters(), apiKeys: store }, { clock }) };
    }

    it('reuses a known key for 5 s: a revoke elsewhere (the store directly) is seen once that has passed', async () => {
      const { clock, store, core } = cached();
      const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
      expect(await core.apiKeys.authenticate(key)).toMatchObject({ keyId: record.keyId });
      expect(await core.apiKeys.authenticate(key)).toMatchObject({ keyId: record.keyId });
      expect(store.lookups).toBe(1);
      expect(await store.revoke(record.keyId)).toBe(true);
      clock.advance(API_KEY_CACHE_TTL_MS - 1);
      expect(await core.apiKeys.authenticate(key)).toMatchObject({ keyId: record.keyId });
      clock.advance(1);
      expect(await core.apiKeys.authenticate(key)).toBeNull();
      expect(store.lookups).toBe(2);
    });

    it('a clock moved backwards expires the entry rather than extending it', async () => {
      const { clock, store, core } = cached();
      const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
      await core.apiKeys.authenticate(key);
      await store.revoke(record.keyId);
      clock.advance(-1);
      expect(await core.apiKeys.authenticate(key)).toBeNull();
    });

    it('a revoke through the service stops the key at once', async () => {
      const { core } = cached();
      const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
      await core.apiKeys.authenticate(key);
      expect(await core.apiKeys.revoke(record.keyId)).toBe(true);
      expect(await core.apiKeys.authenticate(key)).toBeNull();
    });

    it('an upsert through the service changes the grant for the next request', async () => {
      const { core } = cached();
      const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
      await core.apiKeys.authenticate(key);
      const regranted: ApiKeyRecord = { ...record, scopes: ['agents:read'] };
      expect((await core.apiKeys.upsert(regranted)).outcome).toBe('updated');
      expect((await core.apiKeys.authenticate(key))?.scopes).toEqual(['agents:read']);
    });

    it('unknown keys are not cached: a key stored elsewhere works at once', async () => {
      const { store, core } = cached();
      const key = generateApiKey();
      expect(await core.apiKeys.authenticate(key)).toBeNull();
      await store.insert({
        keyId: 'key_elsewhere',
        workspaceId: 'ws1',
        plan: 'pro',
        scopes: ['*'],
        hash: hashApiKey(key),
        createdAt: START,
      });
      expect(await core.apiKeys.authenticate(key)).toMatchObject({ keyId: 'key_elsewhere' });
    });

    it('a lookup begun before a revoke through the service does not cache what it read', async () => {
      const { store, core } = cached();
      const { key, record } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' });
      let release!: () => void;
      store.hold = new Promise((resolve) => (release = resolve));
      const racing = core.apiKeys.authenticate(key);
      store.hold = undefined;
      expect(await core.apiKeys.revoke(record.keyId)).toBe(true);
      release();
      // The request that began before the revoke may still pass; the next one may not.
      expect(await racing).toMatchObject({ keyId: record.keyId });
      expect(await core.apiKeys.authenticate(key)).toBeNull();
    });

    it("hands out frozen principals, so no request can change another one's", async () => {
      const { core } = cached();
      const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro', scopes: ['agents:read'] });
      const principal = (await core.apiKeys.authenticate(key))!;
      expect(Object.isFrozen(principal) && Object.isFrozen(principal.scopes)).toBe(true);
      expect(() => ((principal as { workspaceId: string }).workspaceId = 'ws2')).toThrow(TypeError);
      expect(await core.apiKeys.authenticate(key)).toEqual({
        keyId: principal.keyId,
        workspaceId: 'ws1',
        plan: 'pro',
        scopes: ['agents:read'],
      });
    });

    it(`holds at most ${API_KEY_CACHE_SIZE} principals, dropping the oldest`, async () => {
      const { store, core } = cached();
      const keys = Array.from({ length: API_KEY_CACHE_SIZE + 1 }, (_, i) => `acme-key-${i}`);
      for (const [i, key] of keys.entries()) {
        await store.insert({
          keyId: `key_${i}`,
          workspaceId: 'ws1',
          plan: 'pro',
          scopes: ['*'],
          hash: hashApiKey(key),
          createdAt: START,
        });
      }
      for (const key of keys) await core.apiKeys.authenticate(key);
      expect(store.lookups).toBe(keys.length);
      await core.apiKeys.authenticate(keys[1]!);
      expect(store.lookups).toBe(keys.length);
      await core.apiKeys.authenticate(keys[0]!);
      expect(store.lookups).toBe(keys.length + 1);
    });
  });
});
