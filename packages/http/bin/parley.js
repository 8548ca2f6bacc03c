#!/usr/bin/env node
/**
 * @module The `parley` command's entry: loads the built `dist/cli/cli.js`. It is a committed file,
 * not `dist/cli/cli.js` itself, because npm links (and marks executable) a bin only when its file
 * exists at install time — in this repository `npm ci` runs before the first build.
 */
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli/cli.js', import.meta.url);
try {
  await import(cli.href);
} catch (error) {
  // Only the CLI module itself missing means "not built"; a missing dependency is a real error.
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(fileURLToPath(cli))) {
    process.stderr.write('parley: @parley/http is not built yet: run `npm run build` first.\n');
    process.exit(1);
  }
  throw error;
}
