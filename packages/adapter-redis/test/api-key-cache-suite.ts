/**
 * @module Test support: a key revoked by another process (its own connection and `ApiKeyService`)
 * stops authenticating on this one within `API_KEY_CACHE_TTL_MS` (docs/authentication.md#revocation).
 */
import { API_KEY_CACHE_TTL_MS, ApiKeyService, createUlidGenerator, systemClock } from '@parley/core/adapter';
import { describe, expect, it } from 'vitest';
import { RedisApiKeyStore } from '../src/redis-api-keys.js';
import { REDIS_URL, deletePrefix, uniquePrefix } from './redis-available.js';
import type { RedisClient } from '../src/connection.js';

/** How much later than the bound the poll below may notice (its interval plus scheduling slack). */
const SLACK_MS = 500;

/** Registers the test; `client` is only used to delete the test's keys afterwards. */
export function runApiKeyCacheTests(client: () => RedisClient): void {
  describe('API key cache across instances', () => {
    it(`a key revoked by another instance stops authenticating here within ${API_KEY_CACHE_TTL_MS} ms`, async () => {
      const prefix = uniquePrefix('key-cache');
      // Two "instances": each its own connection, key store and service.
      const here = new RedisApiKeyStore({ url: REDIS_URL, prefix });
      const there = new RedisApiKeyStore({ url: REDIS_URL, prefix });
      try {
        const serviceHere = new ApiKeyService(here, systemClock, createUlidGenerator());
        const serviceThere = new ApiKeyService(there, systemClock, createUlidGenerator());
        const { key, record } = await serviceThere.issue({ workspaceId: 'acme', plan: 'pro' });
        // Known at once here although issued there (unknown keys are not cached), and now cached.
        expect(await serviceHere.authenticate(key)).toMatchObject({ keyId: record.keyId });

        expect(await serviceThere.revoke(record.keyId)).toBe(true);
        const revokedAt = performance.now();
        // Stopped at once where it was revoked; still served from the cache here.
        expect(await serviceThere.authenticate(key)).toBeNull();
        expect(await serviceHere.authenticate(key)).toMatchObject({ keyId: record.keyId });
        let stoppedAfter = Number.POSITIVE_INFINITY;
        while (performance.now() - revokedAt < API_KEY_CACHE_TTL_MS + SLACK_MS * 2) {
          if ((await serviceHere.authenticate(key)) === null) {
            stoppedAfter = performance.now() - revokedAt;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(stoppedAfter).toBeLessThanOrEqual(API_KEY_CACHE_TTL_MS + SLACK_MS);
      } finally {
        await here.close();
        await there.close();
        await deletePrefix(client(), prefix);
      }
    }, 15_000);
  });
}
