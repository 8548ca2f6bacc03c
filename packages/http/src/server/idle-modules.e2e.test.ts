/**
 * @module What a started server has loaded before any agent replies: the packages only a feature
 * uses (the MCP SDK, the model provider and their schema library, prom-client, pino-pretty) are
 * loaded when that feature is first used, so an idle server does not hold their memory
 * (docs/performance.md, "Packages loaded at first use"). Read in the server process itself: a
 * module hook logs every ES module it resolves, and at exit it writes the CommonJS modules it holds.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess } from '../test-support/server-process.js';

let dir: string;
let preload: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parley-idle-modules-'));
  const hooks = join(dir, 'hooks.mjs');
  await writeFile(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  appendFileSync(process.env.MODULES_LOG, found.url + '\\n');
  return found;
}`,
  );
  preload = join(dir, 'preload.mjs');
  await writeFile(
    preload,
    `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(pathToFileURL(hooks).href)});
process.on('exit', () => appendFileSync(process.env.MODULES_LOG, Object.keys(createRequire(import.meta.url).cache).join('\\n') + '\\n'));`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The npm packages a server started with `env` loaded, after a few requests and a clean stop. */
async function packagesLoaded(name: string, env: Record<string, string>): Promise<Set<string>> {
  const log = join(dir, `${name}.log`);
  const server = await startServerProcess({ ...env, NODE_OPTIONS: `--import=${preload}`, MODULES_LOG: log });
  try {
    expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
    expect((await fetch(`${server.base}/api/agents`)).status).toBe(401);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  const found = new Set<string>();
  for (const line of (await readFile(log, 'utf8')).split('\n')) {
    const match = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(line);
    if (match) found.add(match[1]!.replace('\\', '/'));
  }
  return found;
}

const ON_FIRST_USE = ['@modelcontextprotocol/sdk', '@ai-sdk/openai-compatible', 'zod', 'prom-client', 'pino-pretty'];

describe('an idle server', () => {
  it('has not loaded what only MCP servers, models, metrics or pretty logs use', async () => {
    const loaded = await packagesLoaded('plain', {
      MODELS: JSON.stringify({
        helper: { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' },
      }),
      LOG_FORMAT: 'json',
    });
    expect(loaded).toContain('hono');
    expect(ON_FIRST_USE.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('loads prom-client with METRICS_PORT and pino-pretty with LOG_FORMAT=pretty (what the check above would see)', async () => {
    const loaded = await packagesLoaded('features', { METRICS_PORT: '0', LOG_FORMAT: 'pretty' });
    expect(loaded).toContain('prom-client');
    expect(loaded).toContain('pino-pretty');
  });
});
