/** @module Example (e), production side: without a reachable Redis it says what it needs, in one line, and exits 1. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('says it needs Redis at REDIS_URL when none answers there', async () => {
  const server = fileURLToPath(new URL('./server.ts', import.meta.url));
  // Port 1 on loopback: nothing listens there.
  const env = { ...process.env, REDIS_URL: 'redis://127.0.0.1:1', PORT: '0' };
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
    execFile(process.execPath, ['--import', 'tsx', server], { env, timeout: 15_000 }, (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr })),
  );
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('The support desk needs Redis at redis://127.0.0.1:1 (set REDIS_URL, or start one with `redis-server`).');
}, 20_000);
