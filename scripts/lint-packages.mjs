/**
 * @module `npm run lint:packages`: checks every publishable package as it would be published
 * (after the build, as `npm test` runs it). Each package is packed once with `npm pack`, and
 * the tarball goes to:
 * - publint (strict): `exports`, `files`, `main` and `types` point at packed files and agree;
 * - @arethetypeswrong (the engine of its CLI, profile esm-only: the packages are ESM only, so
 *   node10 and require() resolution are not checked): types resolve under node16 and bundlers;
 * - a file list check: only `package.json`, README, LICENSE, built `dist` files and `bin` entry scripts ship; no
 *   tests, build info or sources (plus `migrations/NNNN_name.sql`: SQL a DBA reads and runs).
 * Packages are checked in parallel; the exit code is 1 when anything fails.
 */
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../', import.meta.url));
const packages = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name))
  .filter((dir) => !JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private);

const LICENSE = readFileSync(join(root, 'LICENSE'), 'utf8');
const SHIPPED =
  /^(package\.json|README\.md|LICENSE(\.md|\.txt)?|dist\/.+|bin\/[a-z-]+\.js|migrations\/\d{4}_[a-z0-9_]+\.sql)$/;
const NEVER = /(\.test\.|\.tsbuildinfo$|\/test-support\/)/;
/** What `attw --profile esm-only` ignores. */
const IGNORED_RESOLUTIONS = ['node10', 'node16-cjs'];

async function check(dir, destination) {
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
    cwd: dir,
  });
  const [packed] = JSON.parse(stdout);
  const tarball = readFileSync(join(destination, packed.filename));
  const problems = [];

  // Files in an npm tarball sit under `package/`.
  const { messages, pkg } = await publint({
    pkgDir: 'package',
    strict: true,
    pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
  });
  for (const message of messages) problems.push(`publint ${message.type}: ${formatMessage(message, pkg)}`);

  const analysis = await checkPackage(createPackageFromTarballData(new Uint8Array(tarball)));
  if (!analysis.types) problems.push('attw: the package has no types');
  for (const problem of analysis.types ? analysis.problems : []) {
    if ('resolutionKind' in problem && IGNORED_RESOLUTIONS.includes(problem.resolutionKind)) continue;
    problems.push(
      `attw ${problem.kind}: ${JSON.stringify(problem)} (details: npx attw --pack ${dir} --profile esm-only)`,
    );
  }

  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (manifest.license !== 'MIT') problems.push(`license is ${JSON.stringify(manifest.license)}, not "MIT" (LICENSE)`);
  if (!packed.files.some((file) => file.path === 'LICENSE')) problems.push('npm pack would ship no LICENSE');
  else if (readFileSync(join(dir, 'LICENSE'), 'utf8') !== LICENSE)
    problems.push("LICENSE differs from the repository's LICENSE");

  const unexpected = packed.files.map((file) => file.path).filter((file) => !SHIPPED.test(file) || NEVER.test(file));
  if (unexpected.length) problems.push(`npm pack would ship: ${unexpected.join(', ')}`);
  return { name: packed.name, files: packed.files.length, problems };
}

const destination = mkdtempSync(join(tmpdir(), 'parley-pack-'));
try {
  const results = await Promise.all(packages.map((dir) => check(dir, destination)));
  for (const { name, files, problems } of results) {
    console.log(
      `${problems.length ? '✗' : '✓'} ${name} (${files} files)${problems.map((problem) => `\n  ${problem}`).join('')}`,
    );
  }
  if (results.some((result) => result.problems.length)) process.exitCode = 1;
} finally {
  rmSync(destination, { recursive: true, force: true });
}
