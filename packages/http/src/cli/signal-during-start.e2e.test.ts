/**
 * @module A stop signal during start-up (docs/operations.md, "Processes"): `parley serve` has its
 * SIGTERM handler before it starts, so a signal that comes while it connects to its store is kept
 * and the server stops cleanly once started (exit 0), instead of dying of the signal's default
 * action with no exit code. The store is Redis behind a loopback proxy that sends the signal when
 * the server's first connection arrives, so the signal lands during start-up on every machine.
 */
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { startLatencyProxy } from '../test-support/latency-proxy.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import { spawnCli } from '../test-support/server-process.js';

describeIfAvailable('Redis', await probeRedis())('a stop signal during start-up', () => {
  it('parley serve keeps a SIGTERM that comes while it connects to its store, starts, drains and exits 0', async () => {
    let server: ChildProcess | undefined;
    let signalled = false;
    // The server's first connection to its store: start-up is under way, not finished.
    const proxy = await startLatencyProxy(Number(new URL(REDIS_URL).port || 6379), {
      onConnection: () => {
        if (signalled || !server) return;
        signalled = true;
        server.kill('SIGTERM');
      },
    });
    const prefix = uniquePrefix('signal-at-start');
    try {
      const child = spawnCli(['serve'], {
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        REDIS_PREFIX: prefix,
      });
      server = child;
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
      );
      expect(signalled).toBe(true);
      expect({ code, signal }, output).toEqual({ code: 0, signal: null });
      expect(output).toContain('Parley is listening on');
      expect(output).toMatch(/"msg":"stopped"/);
    } finally {
      await proxy.close();
      const client = new Redis(REDIS_URL);
      await deletePrefix(client, prefix);
      client.disconnect();
    }
  });
});
