/** @module `parleyCommand()`: the banner's `parley …` lines work where they are printed. */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parleyCommand } from './cli-name.js';

const bin = fileURLToPath(new URL('../../bin/parley.js', import.meta.url));
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'parley-cli-name-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('parleyCommand', () => {
  it('is `npx parley` at the repository root after npm install (workspaces link the bin)', () => {
    expect(parleyCommand({ PATH: '/usr/bin' }, root)).toBe('npx parley');
  });

  it('is `parley` when that name on PATH is this command', () => {
    symlinkSync(bin, join(scratch, 'parley'));
    expect(parleyCommand({ PATH: `/usr/bin:${scratch}` }, '/')).toBe('parley');
  });

  it('is `node <path>` anywhere else', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'parley-elsewhere-'));
    const command = parleyCommand({ PATH: '/usr/bin' }, elsewhere);
    expect(command).toMatch(/^node .*bin\/parley\.js$/);
    rmSync(elsewhere, { recursive: true });
  });
});
