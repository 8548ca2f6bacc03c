/**
 * @module `npm run lint:packages` (second part): every source, test, script and example imports
 * only what its own package declares. A bare import must name the package itself or one of its
 * `dependencies`, `peerDependencies` or `devDependencies` (tests, scripts and benchmarks may also
 * use the repository's root devDependencies: vitest, tsx, …); a relative import must stay inside
 * the package. Workspaces resolve undeclared packages through the hoisted node_modules, so
 * without this check such an import works here and breaks for whoever installs the package.
 * It also refuses import cycles between a package's own source files (type-only imports count: a
 * cycle of types is still two files that cannot be read one without the other).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const rootDev = new Set(Object.keys(rootManifest.devDependencies ?? {}));

/**
 * Imports allowed although undeclared, each with its reason. Core's service tests run on the
 * memory adapter, which depends on core: declaring it would make a workspace cycle that turbo
 * refuses to build. Likewise the client's end-to-end tests and its type generator run the HTTP
 * app, which serves the console, which is built with the client.
 */
const EXCEPTIONS = [
  { from: 'packages/core/', imports: '@parley/adapter-memory', onlyIn: /\.test\.ts$/ },
  { from: 'packages/client/', imports: '@parley/http', onlyIn: /\.test\.ts$|\/scripts\// },
];

const SOURCE = /\.(ts|mts|mjs|js)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'generated', '.turbo']);
const SPECIFIERS =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function* files(dir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP_DIRS.has(name)) yield* files(path);
    } else if (SOURCE.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/** `@scope/name` or `name` of a bare specifier. */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Test code, scripts and benchmarks: never published, so root devDependencies are fine there. */
const isToolingFile = (path) => /\.test\.ts$|[/\\](test|test-support|bench|scripts)[/\\]/.test(path);

const problems = [];
/** Relative imports of source files (`src/`), file → files it imports, for the cycle check. */
const graph = new Map();
const workspaces = [
  ...readdirSync(join(root, 'packages')).map((name) => join(root, 'packages', name)),
  ...readdirSync(join(root, 'examples')).map((name) => join(root, 'examples', name)),
];
for (const dir of workspaces) {
  const manifestPath = join(dir, 'package.json');
  if (!existsSync(manifestPath)) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const declared = new Set([
    manifest.name,
    ...Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies }),
  ]);
  for (const sub of ['src', 'test', 'bench', 'scripts', 'bin']) {
    for (const file of files(join(dir, sub))) {
      // Examples in comments are not imports: drop block comments and whole-line // comments.
      const text = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      const where = relative(root, file);
      for (const match of text.matchAll(SPECIFIERS)) {
        const specifier = match[1] ?? match[2] ?? match[3];
        if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0])) continue;
        if (specifier.startsWith('.')) {
          const target = resolve(dirname(file), specifier);
          if (!(target + sep).startsWith(dir + sep) && target !== dir)
            problems.push(`${where}: '${specifier}' reaches outside ${relative(root, dir)}`);
          if (sub === 'src' && !/\.test\.ts$/.test(file)) {
            const imported = relative(root, target.replace(/\.js$/, '.ts'));
            graph.set(where, [...(graph.get(where) ?? []), imported]);
          }
          continue;
        }
        if (specifier.startsWith('data:')) continue;
        const name = packageOf(specifier);
        if (declared.has(name)) continue;
        if (isToolingFile(file) && rootDev.has(name)) continue;
        if (EXCEPTIONS.some((rule) => where.startsWith(rule.from) && rule.imports === name && rule.onlyIn.test(where)))
          continue;
        problems.push(`${where}: imports '${specifier}', which ${manifest.name} does not declare`);
      }
    }
  }
}

// Depth-first search for back edges: each cycle is reported once, by the file that closes it.
const state = new Map();
function visit(file, path) {
  state.set(file, 'open');
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 'open')
      problems.push(`import cycle: ${[...path.slice(path.indexOf(next)), next].join(' → ')}`);
    else if (!state.has(next)) visit(next, [...path, next]);
  }
  state.set(file, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);

if (problems.length > 0) {
  console.error(`✗ import problems:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
  process.exitCode = 1;
} else {
  console.log('✓ every import is declared by its package; no import cycles');
}
