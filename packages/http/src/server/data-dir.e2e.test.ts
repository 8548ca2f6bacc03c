/**
 * @module End to end on `DATA_DIR` (embedded PostgreSQL, PGlite), over HTTP against the built
 * `parley` command: every write acknowledged before a kill -9 of the server is readable after a
 * restart on the same folder; a second process on the folder (serve, worker) is refused clearly; a
 * folder of other files is refused; a start does not call itself short of workers, and its banner
 * says how to list keys in a way that works. Needs no PostgreSQL server.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiCall, apiFor } from '../test-support/api-client.js';
import { runCli, startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const KEY = 'data-dir-e2e-key-0123456789abcdef';
const API_KEYS = JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]);
// A first start creates the database in the folder (initdb in WASM): seconds, more on a busy machine.
const START_MS = 120_000;

describe('parley on DATA_DIR', () => {
  const folder = mkdtempSync(join(tmpdir(), 'parley-data-dir-'));
  const env = { DATA_DIR: join(folder, 'data'), API_KEYS };
  const processes: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(processes.map((running) => running.stop('SIGKILL')));
    rmSync(folder, { recursive: true, force: true });
  });
  const start = async () => {
    const running = await startServerProcess(env, 'serve', [], { startTimeoutMs: START_MS });
    processes.push(running);
    return running;
  };

  it(
    'keeps every acknowledged write across a kill -9, and refuses a second process meanwhile',
    { timeout: 4 * START_MS },
    async () => {
      const first = await start();
      expect(first.output()).toContain('embedded PostgreSQL (PGlite)');

      // The folder is held: another serve, a worker, and parley migrate are each refused clearly.
      const second = await runCli(['serve'], { ...env, PORT: '0' }, START_MS);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/DATA_DIR .* is in use by process \d+/);
      const worker = await runCli(['worker'], env);
      expect(worker.code).toBe(1);
      expect(worker.stderr).toContain('parley worker needs DATABASE_URL');
      const migrate = await runCli(['migrate'], env);
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toMatch(/is in use by process/);
      expect((await apiCall(first.base, KEY, 'GET', '/readyz')).status).toBe(200);

      // Writers record what the server acknowledged (201) until it is killed under them.
      const acknowledged: Array<{ conversationId: string; messageIds: string[] }> = [];
      const agents: string[] = [];
      let stop = false;
      const writer = async () => {
        const call = apiFor(first.base, KEY);
        while (!stop) {
          try {
            const agent = await call(
              'POST',
              '/api/agents',
              { name: 'Ada', description: 'Answers', model: 'modelA-4' },
              201,
            );
            agents.push(agent.id);
            const conversation = await call('POST', '/api/conversations', { agentId: agent.id }, 201);
            const entry = { conversationId: conversation.id as string, messageIds: [] as string[] };
            acknowledged.push(entry);
            for (const content of ['Hi', 'there'])
              entry.messageIds.push(
                (await call('POST', `/api/conversations/${conversation.id}/messages`, { role: 'user', content }, 201))
                  .id,
              );
          } catch {
            return; // the server is gone
          }
        }
      };
      const writers = Array.from({ length: 10 }, writer);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await first.stop('SIGKILL');
      stop = true;
      await Promise.all(writers);
      expect(agents.length).toBeGreaterThan(3);

      const restarted = await start();
      const read = apiFor(restarted.base, KEY);
      for (const id of agents) await read('GET', `/api/agents/${id}`, undefined, 200);
      for (const { conversationId, messageIds } of acknowledged) {
        const page = await read('GET', `/api/conversations/${conversationId}/messages?limit=10`, undefined, 200);
        const stored = new Set(page.messages.map((message: { id: string }) => message.id));
        for (const id of messageIds) expect(stored.has(id)).toBe(true);
      }
      expect(await restarted.stop()).toBe(0);
    },
  );
});

describe('DATA_DIR, the folder and the banner', () => {
  const folder = mkdtempSync(join(tmpdir(), 'parley-data-dir-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  const refusal = { timeout: START_MS };
  it('refuses a folder of other files in one line, for serve, migrate and keys, writing nothing', refusal, async () => {
    const documents = join(folder, 'documents');
    mkdirSync(join(documents, 'photos'), { recursive: true });
    writeFileSync(join(documents, 'notes.txt'), 'mine\n');
    const env = { DATA_DIR: documents, API_KEYS, PORT: '0' };
    for (const args of [['serve'], ['migrate'], ['keys', 'list']]) {
      const result = await runCli(args, env, START_MS);
      expect({ args, code: result.code }).toEqual({ args, code: 1 });
      const message =
        `DATA_DIR ${documents} is not empty (notes.txt, photos) and is not a Parley data folder (no PG_VERSION): ` +
        'name a new or empty folder, so the database is not written among these files.';
      expect(result.stderr).toMatch(/^parley[a-z ]*: /);
      expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(message)]);
    }
    expect(readdirSync(documents).sort()).toEqual(['notes.txt', 'photos']);
  });

  const twoStarts = { timeout: 2 * START_MS };
  it('warns of no other workers at start, and says how to list keys in a way that works', twoStarts, async () => {
    const dataDir = join(folder, 'data');
    const serve = async (env: Record<string, string>) => {
      const server = await startServerProcess({ DATA_DIR: dataDir, ...env }, 'serve', [], { startTimeoutMs: START_MS });
      let held: string;
      try {
        held = (await runCli(['keys', 'list'], { DATA_DIR: dataDir })).stderr;
      } finally {
        expect(await server.stop()).toBe(0);
      }
      expect(held).toMatch(/is in use by process/); // hence the banners' wording
      expect(server.output() + server.stderr()).not.toContain('left to workers');
      return server.output();
    };

    // The first start stores a development key; a key is created with the server stopped.
    await serve({});
    const keysCreate = ['keys', 'create', '--workspace', 'acme', '--plan', 'pro'];
    const created = await runCli(keysCreate, { DATA_DIR: dataDir }, START_MS);
    expect(created.code).toBe(0);

    // Keys: the banner says to list them with the same DATA_DIR once the server has stopped, which works.
    const listing = /List them with `(npx )?parley keys list` and the same DATA_DIR once this server has stopped/;
    expect(await serve({})).toMatch(listing);
    const listed = await runCli(['keys', 'list'], { DATA_DIR: dataDir }, START_MS);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('acme');
    expect(listed.stdout).toContain('default');
  });
});
