/**
 * @module The built package as others consume it: `import('@parley/http')` loads no database driver
 * and no server (the ready-made server is `@parley/http/server`, which loads a driver only when a
 * backend is configured, from the optional adapter package), and the `parley` bin runs both
 * in this repository (`npx parley`) and from a packed tarball installed into another project.
 * Runs `dist/` (`npm test` builds before vitest starts) in fresh Node processes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const packageDir = fileURLToPath(new URL('../', import.meta.url));

/**
 * Every module a fresh Node process loads for `import(specifier)`: ESM URLs through a resolve
 * hook (module.register, which sees ESM imports of CommonJS packages too) and CommonJS files
 * from require.cache (ioredis is CommonJS and requires its own files).
 */
async function modulesLoadedBy(specifier: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-loaded-'));
  const log = join(dir, 'resolved.log');
  const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
  return resolved;
}`;
  const script = `import { register, createRequire } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));
await import(${JSON.stringify(specifier)});
process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
  try {
    // cwd at the repository root: '@parley/http' resolves through node_modules, as for a host.
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    const required = JSON.parse(stdout) as string[];
    return [...readFileSync(log, 'utf8').split('\n').filter(Boolean), ...required];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The drivers of the optional adapter packages: ioredis, pg, PGlite. */
const DRIVER = /[/\\]node_modules[/\\](ioredis|pg|@electric-sql[/\\]pglite)[/\\]/;
const SERVER =
  /[/\\]node_modules[/\\]@hono[/\\]node-server[/\\]|[/\\]http[/\\]dist[/\\](server\.js$|server[/\\]|cli[/\\])/;

describe('package entries', () => {
  it('import("@parley/http") loads neither a database driver nor the server', async () => {
    const loaded = await modulesLoadedBy('@parley/http');
    expect(loaded.some((url) => url.includes('/http/dist/index.js'))).toBe(true);
    expect(loaded.some((url) => url.includes('/node_modules/hono/'))).toBe(true);
    expect(loaded.filter((url) => DRIVER.test(url))).toEqual([]);
    expect(loaded.filter((url) => SERVER.test(url))).toEqual([]);
  });

  it('import("@parley/http/server") loads the server but no database driver until one is configured', async () => {
    const loaded = await modulesLoadedBy('@parley/http/server');
    expect(loaded.some((url) => SERVER.test(url))).toBe(true);
    expect(loaded.filter((url) => DRIVER.test(url))).toEqual([]);
  });

  it('the adapter packages do load their drivers (so the checks above can see them)', async () => {
    expect((await modulesLoadedBy('@parley/adapter-redis')).filter((url) => DRIVER.test(url))).not.toEqual([]);
    expect((await modulesLoadedBy('@parley/adapter-postgres')).filter((url) => DRIVER.test(url))).not.toEqual([]);
  });
});

describe('the parley bin', () => {
  const cleanups: Array<() => void> = [];
  afterAll(() => cleanups.forEach((cleanup) => cleanup()));

  it('runs as `npx parley --help` in the repository', async () => {
    // --no-install: fail rather than fetch some other package called "parley" from the registry.
    const { stdout } = await run('npx', ['--no-install', 'parley', '--help'], { cwd: root });
    expect(stdout).toMatch(/^Usage: parley <command>/);
    const version = await run('npx', ['--no-install', 'parley', '--version'], { cwd: packageDir });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version);
  });

  it('runs as `npx parley --help` in another project that installed the packed @parley/http', async () => {
    const project = mkdtempSync(join(tmpdir(), 'parley-host-'));
    cleanups.push(() => rmSync(project, { recursive: true, force: true }));
    const { stdout: packed } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], {
      cwd: packageDir,
    });
    const tarball = join(project, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
    const installed = join(project, 'node_modules', '@parley', 'http');
    mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    // What npm install would add around it: the declared dependencies and required peers (from
    // this repository's node_modules, so nothing is downloaded; optional peers, the database
    // adapters, are left out as npm does) and the bin link. An undeclared import would fail here,
    // as it would for a user.
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    const peers = Object.keys(manifest.peerDependencies).filter(
      (name) => !manifest.peerDependenciesMeta[name]?.optional,
    );
    for (const name of [...Object.keys(manifest.dependencies), ...peers]) {
      mkdirSync(dirname(join(project, 'node_modules', name)), { recursive: true });
      symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name), 'dir');
    }
    mkdirSync(join(project, 'node_modules', '.bin'));
    symlinkSync(join('..', '@parley', 'http', manifest.bin.parley!), join(project, 'node_modules', '.bin', 'parley'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host', private: true }));

    const { stdout } = await run('npx', ['--no-install', 'parley', '--help'], { cwd: project });
    expect(stdout).toMatch(/^Usage: parley <command>/);
  });
});
