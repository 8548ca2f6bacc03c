/**
 * @module Claiming a DATA_DIR folder: a folder of the user's own files is refused and left as it
 * was; new, empty and Parley folders are taken.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { DATA_DIR_MARK, LOCK_FILE, lockDataDir, NotADataDirError } from './data-dir-lock.js';

describe('lockDataDir', () => {
  const root = mkdtempSync(join(tmpdir(), 'parley-claim-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const folder = (name: string, entries: string[] = []) => {
    const path = join(root, name);
    mkdirSync(path);
    for (const entry of entries) {
      if (entry.endsWith('/')) mkdirSync(join(path, entry));
      else writeFileSync(join(path, entry), 'mine\n');
    }
    return path;
  };

  it('refuses a non-empty folder that is not a Parley data folder, in one line, and writes nothing there', () => {
    const path = folder('documents', ['notes.txt', 'photos/', 'taxes.pdf', 'todo.md']);
    const message =
      `DATA_DIR ${path} is not empty (notes.txt, photos, taxes.pdf, …) and is not a Parley data folder ` +
      '(no PG_VERSION): name a new or empty folder, so the database is not written among these files.';
    expect(() => lockDataDir(path)).toThrow(new NotADataDirError(message));
    expect(() => postgresAdapters({ dataDir: path })).toThrow(NotADataDirError);
    expect(message).not.toContain('\n');
    expect(readdirSync(path).sort()).toEqual(['notes.txt', 'photos', 'taxes.pdf', 'todo.md']);
  });

  it('refuses a file', () => {
    const path = join(root, 'a-file');
    writeFileSync(path, 'mine\n');
    const message = `DATA_DIR ${path} is a file: name a new or empty folder.`;
    expect(() => lockDataDir(path)).toThrow(new NotADataDirError(message));
  });

  it('takes a new folder, an empty one, one with only a stale lock or lost+found, and a Parley data folder', () => {
    const paths = [
      join(root, 'new', 'nested'),
      folder('empty'),
      folder('stale-lock', [LOCK_FILE]),
      folder('volume', ['lost+found/']),
      folder('parley', [DATA_DIR_MARK, 'base/', 'postgresql.conf']),
    ];
    for (const path of paths) {
      const release = lockDataDir(path);
      expect(readdirSync(path)).toContain(LOCK_FILE);
      release();
    }
  });
});
