import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from './create-postgres-adapters.js';
import { PGLITE_SHARED_BUFFERS } from './embedded.js';

describe('a data folder opened by postgresAdapters', () => {
  const dirs: string[] = [];
  const folder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-embedded-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // Creating a folder (initdb in WebAssembly, in a child) and opening it twice takes seconds, more on a busy machine.
  it(
    'is created in a child, runs with small shared buffers, and opens again as it was',
    { timeout: 90_000 },
    async () => {
      const dataDir = folder();
      const first = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
      await first.ready();
      const [setting] = await first.sql.query<{ shared_buffers: string }>('SHOW shared_buffers');
      expect(setting?.shared_buffers).toBe(PGLITE_SHARED_BUFFERS);
      await first.sql.query('CREATE TABLE public.kept (id integer)');
      await first.sql.query('INSERT INTO public.kept VALUES (1)');
      await first.close();

      const second = postgresAdapters({ dataDir, sweepIntervalMs: 0 });
      await second.ready();
      expect(await second.sql.query('SELECT id FROM public.kept')).toEqual([{ id: 1 }]);
      await second.close();
    },
  );
});
