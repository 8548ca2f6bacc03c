/**
 * @module The published packages work outside this repository (docs/installing.md): each public
 * package is packed with `npm pack`, the tarballs are installed into a fresh project in a temporary
 * folder (third-party dependencies from the registry, or npm's cache), and there `npx parley serve`
 * answers `/healthz`, the typed client creates and lists an agent, and the core-only example runs.
 * `npm test` builds first, so the tarballs hold what a release would.
 */
import { execFile, spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const PUBLIC = readdirSync(join(root, 'packages'))
  .map((name) => JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as { name: string; private?: boolean })
  .filter((manifest) => !manifest.private)
  .map((manifest) => manifest.name);

const project = mkdtempSync(join(tmpdir(), 'parley-pack-install-'));
const tarballs = join(project, 'tarballs');
// Only the project's own folder: no node_modules of this repository above it to fall back on.
const env: Record<string, string | undefined> = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
for (const name of Object.keys(env)) if (/^(REDIS_|API_KEYS|DATABASE_URL|DATA_DIR|PORT$|HOST$)/.test(name)) delete env[name];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  // Pack what `npm test` just built (no lifecycle scripts: the build already ran).
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs, ...PUBLIC.flatMap((name) => ['-w', name])];
  await run('mkdir', ['-p', tarballs]);
  const packed = JSON.parse((await run('npm', args, { cwd: root, env })).stdout) as Array<{ name: string; filename: string }>;
  const files = Object.fromEntries(packed.map((entry) => [entry.name, `file:tarballs/${entry.filename}`]));
  // `overrides` pins every @parley/* dependency of a tarball to its sibling tarball, never the registry.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'parley-outside', private: true, type: 'module', dependencies: { ...files, hono: '^4.11.5' }, overrides: files }, null, 2));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, env, timeout: 150_000 });
}, 180_000);

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('the packed packages, installed into a fresh project', () => {
  it('installs every public package as a real folder from its tarball, not a link into this repository', () => {
    expect(PUBLIC.sort()).toEqual(['@parley/adapter-memory', '@parley/adapter-postgres', '@parley/adapter-redis', '@parley/client', '@parley/core', '@parley/http']);
    for (const name of PUBLIC) {
      const dir = join(project, 'node_modules', name);
      expect(lstatSync(dir).isSymbolicLink(), name).toBe(false);
      expect(readdirSync(join(dir, 'dist')).length, name).toBeGreaterThan(0);
    }
  });

  it('`npx parley serve` answers /healthz, and the typed client creates and lists an agent with the printed key', async () => {
    const port = await freePort();
    const server = spawn('npx', ['parley', 'serve', '--port', String(port)], { cwd: project, env: { ...env, LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close': every process holding the output pipes (npx and the parley it runs) is gone.
    const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
    try {
      await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toMatch(/KEY=\S+\n[\s\S]*\n\n/);
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const key = /KEY=(\S+)/.exec(output)![1]!;
      writeFileSync(
        join(project, 'client.mjs'),
        [
          "import { createParleyClient } from '@parley/client';",
          'const parley = createParleyClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY });',
          "const agent = await parley.agents.create({ name: 'Outside', description: 'Installed from tarballs', model: 'modelA-4' });",
          'const { agents } = await parley.agents.list();',
          'console.log(JSON.stringify({ id: agent.id, names: agents.map((each) => each.name) }));',
        ].join('\n'),
      );
      const { stdout } = await run(process.execPath, ['client.mjs'], { cwd: project, env: { ...env, BASE: base, KEY: key } });
      expect(JSON.parse(stdout)).toEqual({ id: expect.stringMatching(/^agt_/), names: ['Outside'] });
    } finally {
      // npx runs parley in a child process: signal the whole group, as a terminal's Ctrl-C does.
      process.kill(-server.pid!, 'SIGTERM');
    }
    await closed;
    // parley drained and stopped on its own (it logs `stopped` just before exiting 0).
    expect(output).toContain('"msg":"stopped"');
    expect(output).not.toContain('"level":50');
  }, 60_000);

  it('runs the core-only example (examples/core-script) against the installed @parley/core', async () => {
    const source = readFileSync(join(root, 'examples/core-script/src/main.ts'), 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(project, 'core-script.mjs'), outputText);
    const { stdout } = await run(process.execPath, ['core-script.mjs'], { cwd: project, env });
    expect(stdout).toContain('Billing helper: user: I was charged twice. | assistant: Which invoice? (more: false)');
    expect(stdout).toContain('another workspace sees nothing');
  }, 30_000);
});
