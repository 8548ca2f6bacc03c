/**
 * @module One process per PGlite data folder: a lock file holding the owner's pid, created
 * exclusively; a lock whose process is gone (killed, crashed) is taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file's name inside the data folder. */
export const LOCK_FILE = 'parley.lock';

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
 * Takes the lock on `dataDir` (creating the folder) and returns what releases it. Throws
 * {@link DataDirLockedError} naming the holder's pid when a live process holds it.
 */
export function lockDataDir(dataDir: string): () => void {
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
        throw new DataDirLockedError(`DATA_DIR ${dataDir} is in use by process ${holder}: the embedded database serves one process at a time. Stop it, or use another DATA_DIR (or DATABASE_URL to share one database).`);
      }
      if (holder === process.pid) throw new DataDirLockedError(`DATA_DIR ${dataDir} is already open in this process.`);
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirLockedError(`Could not lock DATA_DIR ${dataDir}.`);
}
