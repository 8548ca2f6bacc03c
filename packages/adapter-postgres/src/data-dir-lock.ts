/**
 * @module Claiming a PGlite data folder: only a new, empty or Parley data folder (never a folder
 * of the user's own files), and one process at a time: a lock file holding the owner's pid,
 * created exclusively; a lock whose process is gone (killed, crashed) is taken over.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file's name inside the data folder. */
export const LOCK_FILE = 'parley.lock';

/**
 * What marks a Parley data folder: the file PostgreSQL, and so PGlite, writes first when it
 * creates a data folder (it holds the major version).
 */
export const DATA_DIR_MARK = 'PG_VERSION';

/** What an empty folder may still hold: a stale lock of a start that got no further, a volume's lost+found. */
const NOT_CONTENT = new Set([LOCK_FILE, 'lost+found']);

/** Thrown when a data folder is a file, or a non-empty folder that is not a Parley data folder. */
export class NotADataDirError extends Error {
  override readonly name = 'NotADataDirError';
}

/**
 * Refuses `dataDir` unless it is missing, empty (but for {@link NOT_CONTENT}) or a Parley data
 * folder (it holds {@link DATA_DIR_MARK}), so the database's files are never written among a
 * user's own. Writes nothing.
 * @throws NotADataDirError naming the folder and a few of its entries
 */
export function checkDataDir(dataDir: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new NotADataDirError(`DATA_DIR ${dataDir} is a file: name a new or empty folder.`);
    throw error;
  }
  if (entries.includes(DATA_DIR_MARK)) return;
  const content = entries.filter((name) => !NOT_CONTENT.has(name)).sort();
  if (content.length === 0) return;
  const named = `${content.slice(0, 3).join(', ')}${content.length > 3 ? ', …' : ''}`;
  throw new NotADataDirError(
    `DATA_DIR ${dataDir} is not empty (${named}) and is not a Parley data folder (no ${DATA_DIR_MARK}): ` +
      'name a new or empty folder, so the database is not written among these files.',
  );
}

/** Thrown when another live process holds the data folder. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes the lock on `dataDir` (creating the folder) and returns what releases it.
 * @throws NotADataDirError when the folder is not one Parley may use ({@link checkDataDir});
 * DataDirLockedError naming the holder's pid when a live process holds it.
 */
export function lockDataDir(dataDir: string): () => void {
  checkDataDir(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isSafeInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new DataDirLockedError(
          `DATA_DIR ${dataDir} is in use by process ${holder}: the embedded database serves one process at a time. Stop it, or use another DATA_DIR (or DATABASE_URL to share one database).`,
        );
      }
      if (holder === process.pid) throw new DataDirLockedError(`DATA_DIR ${dataDir} is already open in this process.`);
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirLockedError(`Could not lock DATA_DIR ${dataDir}.`);
}
