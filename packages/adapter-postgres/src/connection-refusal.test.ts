/**
 * @module `ready()` against a real PostgreSQL server with wrong connection settings: a database or
 * role that does not exist, or a TLS mode the server does not take, fails at once with the
 * server's message; a server that is not up yet is still waited for.
 */
import { describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { POSTGRES_ADMIN_URL, describeIfPostgres, probePostgres } from './testing/index.js';

/** Well under the 10 s `ready()` would otherwise wait. */
const AT_ONCE_MS = 2_000;

/** `ready(waitMs)`'s rejection and how long it took; the adapters closed. */
async function ready(url: URL, waitMs = 10_000): Promise<{ message: string | undefined; ms: number }> {
  const adapters = postgresAdapters({
    connectionString: url.toString(),
    sweepIntervalMs: 0,
    listenConnectionString: false,
  });
  const started = Date.now();
  try {
    await adapters.ready(waitMs);
    return { message: undefined, ms: Date.now() - started };
  } catch (error) {
    return { message: (error as Error).message, ms: Date.now() - started };
  } finally {
    await adapters.close();
  }
}

const changed = (change: (url: URL) => void): URL => {
  const url = new URL(POSTGRES_ADMIN_URL);
  change(url);
  return url;
};

describeIfPostgres({ describe, it }, await probePostgres())(
  'postgresAdapters ready() with wrong connection settings',
  () => {
    it("a database that does not exist fails at once with the server's message", async () => {
      const { message, ms } = await ready(changed((url) => (url.pathname = '/parley_no_such_database')));
      expect(message).toMatch(
        /refused the connection: database "parley_no_such_database" does not exist \(SQLSTATE 3D000\)/,
      );
      expect(ms).toBeLessThan(AT_ONCE_MS);
    });

    it("a role that does not exist fails at once with the server's message", async () => {
      const { message, ms } = await ready(changed((url) => (url.username = 'parley_no_such_role')));
      expect(message).toMatch(/refused the connection: role "parley_no_such_role" does not exist \(SQLSTATE 28000\)/);
      expect(ms).toBeLessThan(AT_ONCE_MS);
    });

    it('a TLS mode the server does not take fails at once', async () => {
      const { message, ms } = await ready(changed((url) => url.searchParams.set('sslmode', 'verify-full')));
      expect(message).toMatch(/refused the connection: The server does not support SSL connections/);
      expect(ms).toBeLessThan(AT_ONCE_MS);
    });

    it('a server that does not answer is still waited for, then named', async () => {
      const { message, ms } = await ready(
        changed((url) => (url.port = '1')),
        1_500,
      );
      expect(message).toMatch(/did not answer within 1500 ms: connect ECONNREFUSED/);
      expect(ms).toBeGreaterThanOrEqual(1_500);
    });
  },
);
