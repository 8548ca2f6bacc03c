/** @module Test runner config: one run over every package, importing workspace packages from source. */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests exercise the sources; `npm test` also builds first so type errors fail the run.
    alias: [
      { find: /^@parley\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@parley\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@parley\/adapter-memory$/, replacement: src('adapter-memory/src/index.ts') },
      { find: /^@parley\/adapter-redis\/testing$/, replacement: src('adapter-redis/src/testing/index.ts') },
      { find: /^@parley\/adapter-redis$/, replacement: src('adapter-redis/src/index.ts') },
      { find: /^@parley\/adapter-postgres\/testing$/, replacement: src('adapter-postgres/src/testing/index.ts') },
      { find: /^@parley\/adapter-postgres$/, replacement: src('adapter-postgres/src/index.ts') },
      { find: /^@parley\/http\/server$/, replacement: src('http/src/server.ts') },
      { find: /^@parley\/http$/, replacement: src('http/src/index.ts') },
      { find: /^@parley\/client$/, replacement: src('client/src/index.ts') },
    ],
  },
  test: {
    // `.ci/run` sets VITEST_JSON_REPORT to check the run afterwards (no test may be skipped in CI).
    ...(process.env.VITEST_JSON_REPORT ? { reporters: ['default', 'json'], outputFile: { json: process.env.VITEST_JSON_REPORT } } : {}),
    include: ['packages/*/src/**/*.test.ts', 'examples/*/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
