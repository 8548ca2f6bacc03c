/**
 * @module The published packages work outside this repository, installed exactly as
 * docs/installing.md says: the documented command (`npm run pack:packages`) packs them, and the
 * documented `package.json` — the json block of that page, with only its tarball folder pointed at
 * this repository's — installs them into a fresh project in a temporary folder (third-party
 * dependencies from the registry, or npm's cache). There `npx parley serve` answers `/healthz`, the
 * typed client creates and lists an agent, the core-only example runs, and a strict TypeScript
 * consumer (`strict`, `skipLibCheck: false`) compiles against every public entry point. A second
 * project keeps only what "Only the backend you chose" lists (@parley/http, its @parley
 * dependencies, hono): it serves on memory, compiles, and refuses DATABASE_URL/REDIS_URL in one
 * line naming the adapter package to install.
 * `npm test` builds first, so the tarballs hold what a release would.
 */
import { execFile, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
type Manifest = { name: string; version: string; private?: boolean; exports?: Record<string, unknown> };
const PUBLIC = readdirSync(join(root, 'packages'))
  .map((name) => JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as Manifest)
  .filter((manifest) => !manifest.private);

/** The folder docs/installing.md installs the tarballs from, as a path relative to the user's project. */
const DOCUMENTED_FOLDER = '../parley/.tarballs/';
const guide = readFileSync(join(root, 'docs/installing.md'), 'utf8');
const jsonBlocks = [...guide.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

const project = mkdtempSync(join(tmpdir(), 'parley-pack-install-'));
// Only the project's own folder: no node_modules of this repository above it to fall back on.
const env: Record<string, string | undefined> = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};
for (const name of Object.keys(env))
  if (/^(REDIS_|API_KEYS|DATABASE_URL|DATA_DIR|PORT$|HOST$)/.test(name)) delete env[name];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let documented: { dependencies: Record<string, string>; overrides: Record<string, string> };

beforeAll(async () => {
  // The documented command, as a user runs it in this repository.
  await run('npm', ['run', 'pack:packages', '--silent'], { cwd: root, env, timeout: 150_000 });
  expect(jsonBlocks).toHaveLength(1);
  documented = JSON.parse(jsonBlocks[0]!) as typeof documented;
  const tarballs = `${join(root, '.tarballs')}/`;
  writeFileSync(join(project, 'package.json'), jsonBlocks[0]!.replaceAll(DOCUMENTED_FOLDER, tarballs));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: project,
    env,
    timeout: 150_000,
  });
}, 300_000);

// A whole node_modules: off the event loop, with time for a slow shared disk.
afterAll(() => rm(project, { recursive: true, force: true }), 180_000);

describe('the packed packages, installed into a fresh project', () => {
  it('documents every public package: its tarball from `npm run pack:packages`, pinned by `overrides`', () => {
    expect(PUBLIC.map((manifest) => manifest.name).sort()).toEqual([
      '@parley/adapter-memory',
      '@parley/adapter-postgres',
      '@parley/adapter-redis',
      '@parley/client',
      '@parley/console',
      '@parley/core',
      '@parley/http',
    ]);
    const packed = readdirSync(join(root, '.tarballs'));
    for (const { name, version } of PUBLIC) {
      const tarball = `${name.slice(1).replace('/', '-')}-${version}.tgz`;
      expect(packed, name).toContain(tarball);
      expect(documented.dependencies[name], name).toBe(`file:${DOCUMENTED_FOLDER}${tarball}`);
      expect(documented.overrides[name], name).toBe(`$${name}`);
    }
  });

  it('installs every @parley package as a real folder from its tarball, never from the registry', () => {
    const lock = JSON.parse(readFileSync(join(project, 'node_modules/.package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    const installed = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/@parley\//.test(path));
    expect(installed.map(([path]) => path).sort()).toEqual(
      PUBLIC.map((manifest) => `node_modules/${manifest.name}`).sort(),
    );
    for (const [path, entry] of installed) expect(entry.resolved, path).toMatch(/^file:.*\.tgz$/);
    for (const { name } of PUBLIC) {
      const dir = join(project, 'node_modules', name);
      expect(lstatSync(dir).isSymbolicLink(), name).toBe(false);
      expect(readdirSync(join(dir, 'dist')).length, name).toBeGreaterThan(0);
    }
  });

  it('a strict consumer (strict, skipLibCheck: false) importing every public entry point compiles', async () => {
    const consumer = join(project, 'consumer');
    mkdirSync(consumer, { recursive: true });
    const entries = PUBLIC.flatMap(({ name, exports = {} }) =>
      Object.entries(exports)
        .filter(([, target]) => typeof target === 'object' && target !== null && 'types' in target)
        .map(([subpath]) => name + subpath.slice(1)),
    );
    expect(entries).toEqual(
      expect.arrayContaining([
        '@parley/core',
        '@parley/http',
        '@parley/http/server',
        '@parley/adapter-postgres/testing',
      ]),
    );
    writeFileSync(
      join(consumer, 'index.ts'),
      entries.map((entry, index) => `export * as entry${index} from '${entry}';`).join('\n') + '\n',
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          // A project on Node has @types/node (pino's and ioredis's types use it): this repository's.
          // Nothing else is taken from @types: what the packages' types need must come with them.
          typeRoots: [join(root, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['index.ts'],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', consumer], { cwd: project, env }).catch(
      (error: { stdout: string }) => error,
    );
    expect(result.stdout).toBe('');
  }, 120_000);

  it('`npx parley serve` answers /healthz, and the typed client creates and lists an agent with the printed key', async () => {
    const port = await freePort();
    const server = spawn('npx', ['parley', 'serve', '--port', String(port)], {
      cwd: project,
      env: { ...env, LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
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
      const { stdout } = await run(process.execPath, ['client.mjs'], {
        cwd: project,
        env: { ...env, BASE: base, KEY: key },
      });
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
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    writeFileSync(join(project, 'core-script.mjs'), outputText);
    const { stdout } = await run(process.execPath, ['core-script.mjs'], { cwd: project, env });
    expect(stdout).toContain('Billing helper: user: I was charged twice. | assistant: Which invoice? (more: false)');
    expect(stdout).toContain('another workspace sees nothing');
  }, 30_000);
});

/** What docs/installing.md ("Only the backend you chose") keeps: @parley/http, its @parley dependencies and hono. */
const MINIMAL = ['@parley/http', '@parley/core', '@parley/adapter-memory', '@parley/console', 'hono'];
const minimal = mkdtempSync(join(tmpdir(), 'parley-pack-minimal-'));

describe('@parley/http installed without the optional database adapters', () => {
  beforeAll(async () => {
    const keep = <T>(record: Record<string, T>) =>
      Object.fromEntries(Object.entries(record).filter(([name]) => MINIMAL.includes(name)));
    const manifest = JSON.parse(jsonBlocks[0]!.replaceAll(DOCUMENTED_FOLDER, `${join(root, '.tarballs')}/`)) as {
      dependencies: Record<string, string>;
      overrides: Record<string, string>;
    };
    writeFileSync(
      join(minimal, 'package.json'),
      JSON.stringify({ ...manifest, dependencies: keep(manifest.dependencies), overrides: keep(manifest.overrides) }),
    );
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: minimal,
      env,
      timeout: 150_000,
    });
  }, 200_000);

  afterAll(() => rm(minimal, { recursive: true, force: true }), 180_000);

  it('installs no database adapter and no driver', () => {
    const installed = readdirSync(join(minimal, 'node_modules'));
    for (const name of ['ioredis', 'pg']) expect(installed, name).not.toContain(name);
    expect(readdirSync(join(minimal, 'node_modules/@parley')).sort()).toEqual([
      'adapter-memory',
      'console',
      'core',
      'http',
    ]);
    expect(installed).not.toContain('@electric-sql');
  });

  it('`npx parley serve` answers /healthz on memory', async () => {
    const port = await freePort();
    const server = spawn('npx', ['--no-install', 'parley', 'serve', '--port', String(port)], {
      cwd: minimal,
      env: { ...env, LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
    try {
      await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toMatch(/KEY=\S+\n[\s\S]*\n\n/);
      expect(output).toContain('memory storage');
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      process.kill(-server.pid!, 'SIGTERM');
    }
    await closed;
  }, 60_000);

  it('a strict consumer of @parley/http and @parley/http/server compiles without the adapters', async () => {
    writeFileSync(
      join(minimal, 'index.ts'),
      "export * as app from '@parley/http';\nexport * as server from '@parley/http/server';\n",
    );
    writeFileSync(
      join(minimal, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          typeRoots: [join(root, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['index.ts'],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', minimal], { cwd: minimal, env }).catch(
      (error: { stdout: string }) => error,
    );
    expect(result.stdout).toBe('');
  }, 120_000);

  it.each([
    ['DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres', '@parley/adapter-postgres'],
    ['REDIS_URL', 'redis://127.0.0.1:6379', '@parley/adapter-redis'],
  ])(
    '`%s=%s npx parley serve` exits 1 with one line naming %s',
    async (setting, value, adapter) => {
      const failure = await run('npx', ['--no-install', 'parley', 'serve', '--port', String(await freePort())], {
        cwd: minimal,
        env: { ...env, [setting]: value },
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failure.code).toBe(1);
      expect(failure.stdout).toBe('');
      expect(failure.stderr).toBe(
        `parley: ${setting} needs ${adapter}, which is not installed: npm install ${adapter}\n`,
      );
    },
    60_000,
  );

  it('`parley migrate` and `parley keys` say the same in one line', async () => {
    const fail = (args: string[], extra: Record<string, string>) =>
      run('npx', ['--no-install', 'parley', ...args], {
        cwd: minimal,
        env: { ...env, ...extra },
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
    const migrate = await fail(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    expect([migrate.code, migrate.stderr]).toEqual([
      1,
      'parley migrate: DATABASE_URL needs @parley/adapter-postgres, which is not installed: npm install @parley/adapter-postgres\n',
    ]);
    const keys = await fail(['keys', 'list'], { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect([keys.code, keys.stderr]).toEqual([
      1,
      'parley keys: REDIS_URL needs @parley/adapter-redis, which is not installed: npm install @parley/adapter-redis\n',
    ]);
  }, 60_000);
});
