/**
 * @module `parley serve` flags, an address in use, and `LOG_FORMAT`, through the built command
 * (docs/configuration.md): a flag wins over its environment variable, bad usage and a port in use
 * are one readable line with a non-zero exit, pretty logs are lines a person reads, JSON stays JSON.
 */
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServerProcess } from '../test-support/server-process.js';

async function listeningPort(): Promise<{ port: number; close(): void }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, close: () => server.close() };
}

describe('parley serve flags', () => {
  const busy = listeningPort();
  afterAll(async () => (await busy).close());

  it('--port wins over PORT, and the server answers there', async () => {
    const { port: taken } = await busy;
    const free = await listeningPort();
    const port = free.port;
    free.close();
    const server = await startServerProcess({ PORT: String(taken), LOG_FORMAT: 'json' }, 'serve', [
      '--port',
      String(port),
    ]);
    try {
      expect(server.output()).toContain(`listening on http://127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('an unknown flag is one line and exit code 2', async () => {
    const result = await runCli(['serve', '--prot', '4000']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^parley: .*'--prot'.*See parley --help\.\n$/);
  });

  it('an address in use is one readable line, exit code 1, no stack', async () => {
    const { port } = await busy;
    const result = await runCli(['serve', '--port', String(port)], { LOG_LEVEL: 'silent' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `parley: 127.0.0.1:${port} is already in use (another parley serve?): stop what listens there, or choose another port with --port or PORT.\n`,
    );
  });
});

describe('LOG_FORMAT', () => {
  const oneRequest = async (format: string) => {
    const server = await startServerProcess({ LOG_LEVEL: 'info', LOG_FORMAT: format });
    await fetch(`${server.base}/healthz`);
    expect(await server.stop()).toBe(0);
    return server
      .output()
      .split('\n')
      .filter((line) => line.includes('/healthz'));
  };

  it('json (and auto, off a terminal) writes one JSON object per line, as before', async () => {
    for (const format of ['json', 'auto']) {
      const [line] = await oneRequest(format);
      expect(JSON.parse(line!)).toMatchObject({
        level: 30,
        service: 'parley',
        method: 'GET',
        path: '/healthz',
        status: 200,
        msg: 'request',
      });
    }
  });

  it('pretty writes a readable line: time, level name, message, fields', async () => {
    const lines = await oneRequest('pretty');
    expect(lines.join('\n')).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: request/m);
    expect(lines.join('\n')).toContain('"path":"/healthz"');
    expect(() => JSON.parse(lines[0]!)).toThrow();
  });

  it('a bad LOG_FORMAT stops start-up naming the variable', async () => {
    const result = await runCli(['serve'], { LOG_FORMAT: 'colourful' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('LOG_FORMAT: Expected one of auto, json, pretty.');
  });
});
