/** @module Runs example (a) as its own process, calls the API it serves, and stops it with SIGTERM. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const KEY = 'example-key-0123456789';

it('starts the ready-made server from code, serves the API and the reference, and drains on SIGTERM', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'silent',
      API_KEYS: JSON.stringify([{ key: KEY, workspace: 'demo', plan: 'pro' }]),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let stdout = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
        const match = /listening on (http:\/\/[^\s]+) /.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${stdout}`)));
    });

    const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${url}/api/agents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Ada', description: '', model: 'modelA-4' }),
    });
    expect(created.status).toBe(201);
    expect(((await (await fetch(`${url}/api/agents`, { headers })).json()) as { total: number }).total).toBe(1);
    expect((await fetch(`${url}/docs`)).status).toBe(200);
  } finally {
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  }
}, 30_000);
