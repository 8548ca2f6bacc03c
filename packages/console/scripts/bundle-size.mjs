/**
 * @module After `vite build`: prints the gzipped size of the console's JavaScript and CSS and fails
 * (exit 1) above the budget of 250 KB (docs/console.md).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 250 * 1000;
const assets = fileURLToPath(new URL('../dist/app/assets/', import.meta.url));
let total = 0;
const lines = [];
for (const name of readdirSync(assets).filter((file) => /\.(js|css)$/.test(file))) {
  const size = gzipSync(readFileSync(join(assets, name)), { level: 9 }).length;
  total += size;
  lines.push(`  ${name}: ${(size / 1000).toFixed(1)} kB gzipped`);
}
console.log(
  `@parley/console: JavaScript and CSS ${(total / 1000).toFixed(1)} kB gzipped (budget 250 kB)\n${lines.join('\n')}`,
);
if (total > BUDGET_BYTES) {
  console.error(`@parley/console: over the budget by ${((total - BUDGET_BYTES) / 1000).toFixed(1)} kB`);
  process.exitCode = 1;
}
