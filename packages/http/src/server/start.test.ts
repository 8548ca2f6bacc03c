/** @module Tests of server start-up on memory storage: development key, configured keys, configuration wiring. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../cli/config.js';
import { startServer, type RunningServer } from './start.js';

async function started(env: Record<string, string>, run: (server: RunningServer, printed: string) => Promise<void>) {
  let printed = '';
  const server = await startServer(loadConfig({ PORT: '0', LOG_LEVEL: 'silent', ...env }), {
    print: (text) => (printed += text),
  });
  try {
    await run(server, printed);
  } finally {
    await server.close();
  }
}

describe('startServer', () => {
  it('without API_KEYS creates one development key and prints it once with a curl line that works', async () => {
    await started({}, async (server, printed) => {
      expect(printed).toContain(`Parley is listening on ${server.handle.url}`);
      expect(printed).toContain(`API reference: ${server.handle.url}/docs`);
      const key = /^ {2}KEY=(\S+)$/m.exec(printed)?.[1];
      expect(key).toBe(server.devKey);
      expect(printed.split(key!).length - 1).toBe(2);
      const curl = /curl -H "Authorization: Bearer (\S+)" (\S+)/.exec(printed)!;
      const response = await fetch(curl[2]!, { headers: { Authorization: `Bearer ${curl[1]}` } });
      expect(response.status).toBe(200);
      const [record] = await server.core.apiKeys.list();
      expect(record).toMatchObject({
        workspaceId: 'default',
        plan: 'pro',
        scopes: ['*'],
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(JSON.stringify(record)).not.toContain(key!);
    });
  });

  it('issues the API_KEYS entries (hashes only) and creates no development key', async () => {
    const apiKeys = [
      { key: 'reader-key-0123456789', workspace: 'acme', plan: 'free', scopes: ['agents:read'] },
      { key: 'big-key-0123456789abc', workspace: 'bigco', plan: 'enterprise', limitPerHour: 50000 },
    ];
    await started({ API_KEYS: JSON.stringify(apiKeys) }, async (server, printed) => {
      expect(server.devKey).toBeUndefined();
      expect(printed).not.toContain('KEY=');
      expect(printed).not.toContain('reader-key');
      expect(printed).toContain('API keys: 2 from API_KEYS (2 new, 0 updated, 0 unchanged); 2 in memory in total.');
      const call = (key: string, method = 'GET') =>
        fetch(`${server.handle.url}/api/agents`, { method, headers: { Authorization: `Bearer ${key}` } });
      expect((await call('reader-key-0123456789')).status).toBe(200);
      expect((await call('reader-key-0123456789', 'POST')).status).toBe(403);
      expect(await server.core.apiKeys.authenticate('big-key-0123456789abc')).toMatchObject({
        workspaceId: 'bigco',
        plan: 'enterprise',
        limitPerHour: 50000,
      });
    });
  });

  it('answers pages of the CORS_ORIGINS origins, and sends no CORS headers without it', async () => {
    const fromApp = (server: RunningServer) =>
      fetch(`${server.handle.url}/api/agents`, {
        headers: { Authorization: `Bearer ${server.devKey}`, Origin: 'http://app.example.com' },
      });
    await started({ CORS_ORIGINS: 'http://app.example.com' }, async (server) => {
      expect((await fromApp(server)).headers.get('Access-Control-Allow-Origin')).toBe('http://app.example.com');
    });
    await started({}, async (server) => {
      expect((await fromApp(server)).headers.get('Access-Control-Allow-Origin')).toBeNull();
    });
  });

  it('refuses private webhook URLs unless WEBHOOK_ALLOW_PRIVATE_URLS=true', async () => {
    const register = (server: RunningServer) =>
      fetch(`${server.handle.url}/api/webhooks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${server.devKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:4000/hooks', events: ['agent.created'] }),
      });
    await started({}, async (server) => {
      const response = await register(server);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { details: unknown } }).error.details).toEqual({
        issues: [{ path: 'url', message: expect.stringContaining('loopback address') }],
      });
    });
    await started({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, async (server) => {
      expect((await register(server)).status).toBe(201);
    });
  });
});
