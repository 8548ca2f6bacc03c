/** @module Test runner config: one run over every package, importing workspace packages from source. */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));
const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));

const include = ['packages/*/src/**/*.test.ts', 'examples/*/**/*.test.ts', 'test/**/*.test.ts'];
const exclude = ['**/node_modules/**', '**/dist/**'];

/**
 * Test files that need a service: Redis, PostgreSQL (a server, or PGlite in a `DATA_DIR`) or
 * Chromium — every test of the Redis and PostgreSQL adapters, and any other file that imports
 * what reaches one. Read from the files themselves, so a new test lands in the right project.
 */
const NEEDS_A_SERVICE = new RegExp(
  [
    /\b(ioredis|@parley\/adapter-(redis|postgres)|sharedBackends|probe(Redis|Postgres)(Binaries)?)\b/.source,
    /\b(startRedisServer|startPrivatePostgres|createTest(Database|Pglite)|playwright-core)\b/.source,
    /\bDATA_DIR: /.source,
  ].join('|'),
);
const needsAService = (file: string) =>
  /^packages\/adapter-(redis|postgres)\//.test(file) || NEEDS_A_SERVICE.test(readFileSync(`${root}/${file}`, 'utf8'));
/** Every file `include` names, relative to the root. */
const testFiles = ['packages', 'examples', 'test']
  .flatMap((dir) => readdirSync(`${root}/${dir}`, { recursive: true, encoding: 'utf8' }).map((at) => `${dir}/${at}`))
  .filter((file) => /^(packages\/[^/]+\/src|examples|test)\/.*\.test\.ts$/.test(file))
  .filter((file) => !/\/(node_modules|dist)\//.test(file));
const serviceFiles = testFiles.filter(needsAService);

const project = (name: string, files: { include: string[]; exclude: string[] }): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, ...files },
});

export default defineConfig({
  resolve: {
    // Tests exercise the sources; `npm test` also builds first so type errors fail the run.
    alias: [
      { find: /^@parley\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@parley\/core\/adapter$/, replacement: src('core/src/adapter.ts') },
      { find: /^@parley\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@parley\/adapter-memory$/, replacement: src('adapter-memory/src/index.ts') },
      { find: /^@parley\/adapter-redis\/testing$/, replacement: src('adapter-redis/src/testing/index.ts') },
      { find: /^@parley\/adapter-redis$/, replacement: src('adapter-redis/src/index.ts') },
      { find: /^@parley\/adapter-postgres\/testing$/, replacement: src('adapter-postgres/src/testing/index.ts') },
      { find: /^@parley\/adapter-postgres$/, replacement: src('adapter-postgres/src/index.ts') },
      { find: /^@parley\/http\/server$/, replacement: src('http/src/server.ts') },
      { find: /^@parley\/http$/, replacement: src('http/src/index.ts') },
      { find: /^@parley\/client$/, replacement: src('client/src/index.ts') },
      { find: /^@parley\/console$/, replacement: src('console/src/index.ts') },
    ],
  },
  test: {
    // `.ci/run` sets VITEST_JSON_REPORT to check the run afterwards (no test may be skipped in CI).
    ...(process.env.VITEST_JSON_REPORT
      ? { reporters: ['default', 'json'], outputFile: { json: process.env.VITEST_JSON_REPORT } }
      : {}),
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Most files wait (on child processes, sockets, leases, timers) far more than they compute, so
    // more of them run at once than there are cores; vitest's default, one fewer than the cores,
    // ran the suite one file at a time on a 2-core machine. Not more than three: the tests that
    // bound a time (503s within a deadline, recovery within seconds) need the CPU when they run.
    maxWorkers: 3,
    projects: [
      // `npm run test:unit`: no Redis, PostgreSQL or browser.
      project('unit', { include, exclude: [...exclude, ...serviceFiles] }),
      project('services', { include: serviceFiles, exclude }),
    ],
  },
});
