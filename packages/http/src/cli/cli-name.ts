/**
 * @module How to type the `parley` command in the shell it runs from, so what the server prints
 * (`parley keys create …`) works when pasted: `parley` when that name on `PATH` is this very
 * command, `npx parley` when this folder's `node_modules/.bin` has it, else `node <path>`.
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's bin script (`bin/parley.js`, beside `dist/`). */
const BIN = fileURLToPath(new URL('../../bin/parley.js', import.meta.url));

function sameFile(candidate: string, target: string): boolean {
  try {
    return existsSync(candidate) && realpathSync(candidate) === realpathSync(target);
  } catch {
    return false;
  }
}

/**
 * The command line that runs this `parley` from `cwd` with `PATH` (both default to this
 * process's): `parley`, `npx parley` or `node <relative path to bin/parley.js>`.
 */
export function parleyCommand(env: { PATH?: string } = process.env, cwd: string = process.cwd()): string {
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (sameFile(join(dir, 'parley'), BIN)) return 'parley';
  }
  if (sameFile(join(cwd, 'node_modules', '.bin', 'parley'), BIN)) return 'npx parley';
  const path = relative(cwd, BIN);
  return `node ${path.includes(' ') ? JSON.stringify(path) : path}`;
}
