/**
 * @module A stop signal during start-up (docs/operations.md, "Processes"): `parley serve` has its
 * SIGTERM handler before it starts, so a signal that comes while it connects to its store is kept
 * and the server stops cleanly once started (exit 0), instead of dying of the signal's default
 * action with no exit code. The store is Redis behind a loopback proxy that sends the signal when
 * the server's first connection arrives, so the signal lands during start-up on every machine.
 */
import { connect, createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import { spawnCli } from '../test-support/server-process.js';

describeIfAvailable('Redis', await probeRedis())('a stop signal during start-up', () => {
  it('parley serve keeps a SIGTERM that comes while it connects to its store, starts, drains and exits 0', async () => {
    const redis = new URL(REDIS_URL);
    const sockets: Socket[] = [];
    let signalled = false;
    let onConnection = () => {};
    const proxy = createServer((socket) => {
      sockets.push(socket);
      onConnection();
      const upstream = connect(Number(redis.port || 6379), redis.hostname);
      sockets.push(upstream);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const prefix = uniquePrefix('signal-at-start');
    try {
      const { port } = proxy.address() as { port: number };
      const child = spawnCli(['serve'], {
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        REDIS_URL: `redis://127.0.0.1:${port}`,
        REDIS_PREFIX: prefix,
      });
      onConnection = () => {
        if (signalled) return;
        signalled = true;
        child.kill('SIGTERM');
      };
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
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
      const client = new Redis(REDIS_URL);
      await deletePrefix(client, prefix);
      client.disconnect();
    }
  });
});
