/** @module The contract every IdempotencyStore adapter runs against itself: one claim per key, atomically. */
import { randomUUID } from 'node:crypto';
import type { IdempotencyClaim, IdempotencyStore, IdempotentResponse } from '../ports/idempotency.js';
import { contractGroup, type ContractTestApi } from './contract.js';

/** Options of {@link runIdempotencyStoreContract}: `skip` names opted-out tests as `'idempotency: <title>'`. */
export interface IdempotencyStoreContractOptions {
  skip?: readonly string[];
}

/** A fresh store for one test, and what undoes it. */
export interface IdempotencyStoreFixture {
  store: IdempotencyStore;
  cleanup?(): Promise<void>;
}

const WS1 = { workspaceId: 'ws1' };
const WS2 = { workspaceId: 'ws2' };
const LEASE_MS = 60_000;
const TTL_MS = 86_400_000;
const RESPONSE: IdempotentResponse = {
  status: 201,
  contentType: 'application/json',
  body: '{"id":"agt_1","name":"Ünïcode ✓"}',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tokenOf(claim: IdempotencyClaim): string {
  if (claim.outcome !== 'claimed') throw new Error(`expected a claim, got ${claim.outcome}`);
  return claim.token;
}

/**
 * Registers the idempotency store contract: `factory` returns a fresh store for each test (it may
 * share a backend: every test uses keys of its own). Two tests wait about 150 ms for short leases
 * and TTLs to run out.
 */
export function runIdempotencyStoreContract(
  t: ContractTestApi,
  factory: () => IdempotencyStoreFixture | Promise<IdempotencyStoreFixture>,
  options: IdempotencyStoreContractOptions = {},
): void {
  const { expect } = t;
  const key = (name: string) => `${name}-${randomUUID()}`;
  const open = async () => {
    const fixture = await factory();
    return { subject: fixture.store, cleanup: async () => fixture.cleanup?.() };
  };

  contractGroup(t, 'idempotency', open, options.skip ?? [], (test) => {
    test('the first claim wins; a repeat is in_progress, another fingerprint a mismatch', async (store) => {
      const k = key('first');
      const first = await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS });
      expect(first.outcome).toBe('claimed');
      expect(typeof tokenOf(first)).toBe('string');
      expect(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS })).toEqual({
        outcome: 'in_progress',
      });
      expect(await store.claim(WS1, { key: k, fingerprint: 'fp-b', leaseMs: LEASE_MS })).toEqual({
        outcome: 'mismatch',
      });
    });

    test('a completed key replays its response to the same fingerprint, and is a mismatch for another', async (store) => {
      const k = key('complete');
      const token = tokenOf(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS }));
      expect(await store.complete(WS1, { key: k, token, response: RESPONSE, ttlMs: TTL_MS })).toBe(true);
      expect(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS })).toEqual({
        outcome: 'replay',
        response: RESPONSE,
      });
      expect(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS })).toEqual({
        outcome: 'replay',
        response: RESPONSE,
      });
      expect(await store.claim(WS1, { key: k, fingerprint: 'fp-b', leaseMs: LEASE_MS })).toEqual({
        outcome: 'mismatch',
      });
      const empty: IdempotentResponse = { status: 200, contentType: null, body: '' };
      const other = key('empty');
      expect(
        await store.complete(WS1, {
          key: other,
          token: tokenOf(await store.claim(WS1, { key: other, fingerprint: 'fp', leaseMs: LEASE_MS })),
          response: empty,
          ttlMs: TTL_MS,
        }),
      ).toBe(true);
      expect(await store.claim(WS1, { key: other, fingerprint: 'fp', leaseMs: LEASE_MS })).toEqual({
        outcome: 'replay',
        response: empty,
      });
    });

    test('a released key is free again; complete and release need the owning token', async (store) => {
      const k = key('release');
      const token = tokenOf(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS }));
      expect(await store.release(WS1, { key: k, token: 'not-the-token' })).toBe(false);
      expect(await store.complete(WS1, { key: k, token: 'not-the-token', response: RESPONSE, ttlMs: TTL_MS })).toBe(
        false,
      );
      expect(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS })).toEqual({
        outcome: 'in_progress',
      });
      expect(await store.release(WS1, { key: k, token })).toBe(true);
      expect(await store.release(WS1, { key: k, token })).toBe(false);
      expect((await store.claim(WS1, { key: k, fingerprint: 'fp-b', leaseMs: LEASE_MS })).outcome).toBe('claimed');
    });

    test('workspaces are apart: the same key in another workspace is its own', async (store) => {
      const k = key('tenancy');
      const token = tokenOf(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS }));
      await store.complete(WS1, { key: k, token, response: RESPONSE, ttlMs: TTL_MS });
      expect((await store.claim(WS2, { key: k, fingerprint: 'fp-b', leaseMs: LEASE_MS })).outcome).toBe('claimed');
    });

    test('20 concurrent claims of one key: exactly one is claimed, the others in_progress', async (store) => {
      const k = key('concurrent');
      const claims = await Promise.all(
        Array.from({ length: 20 }, () => store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS })),
      );
      expect(claims.filter((claim) => claim.outcome === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim.outcome === 'in_progress')).toHaveLength(19);
    });

    test('an expired lease frees the key, and the old token can no longer complete it', async (store) => {
      const k = key('lease');
      const stale = tokenOf(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: 50 }));
      await sleep(150);
      const fresh = tokenOf(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS }));
      expect(fresh).not.toBe(stale);
      expect(await store.complete(WS1, { key: k, token: stale, response: RESPONSE, ttlMs: TTL_MS })).toBe(false);
      expect(await store.complete(WS1, { key: k, token: fresh, response: RESPONSE, ttlMs: TTL_MS })).toBe(true);
    });

    test('a kept response expires after ttlMs', async (store) => {
      const k = key('ttl');
      await store.complete(WS1, {
        key: k,
        token: tokenOf(await store.claim(WS1, { key: k, fingerprint: 'fp-a', leaseMs: LEASE_MS })),
        response: RESPONSE,
        ttlMs: 50,
      });
      await sleep(150);
      expect((await store.claim(WS1, { key: k, fingerprint: 'fp-b', leaseMs: LEASE_MS })).outcome).toBe('claimed');
    });
  });
}
