/**
 * @module A signal that arrives twice is one stop (docs/operations.md, "Processes"): `npm start`
 * in a terminal gets Ctrl-C from the terminal and again from npm, and systemd signals the whole
 * group, so the server sees a second SIGTERM a few ms after the first. SIGTERM goes to the process
 * group of a real `npm start` while a loopback receiver holds a delivery attempt for 3 s: the
 * server waits for the attempt, logs it as delivered, and exits 0 — on memory, Redis and PostgreSQL.
 */
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, describeIfPostgres, probePostgres } from '@parley/adapter-postgres/testing';
import { eventually, startReceiver } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { apiFor } from '../test-support/api-client.js';
import { REDIS_URL, deletePrefix, describeIfAvailable, probeRedis, uniquePrefix } from '../test-support/redis.js';
import { startServerProcess } from '../test-support/server-process.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const KEY = 'repeated-signal-key-0123456789';
const API_KEYS = JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]);
/** How long the receiver holds the attempt before answering. */
const HOLD_MS = 3_000;

/** This process's environment without the server's own variables, so each run sets its storage. */
function inheritedEnv(): Record<string, string | undefined> {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    const own = /^(API_KEYS|REDIS_|DATABASE_|DATA_DIR|PARLEY_|WEBHOOK_|DELIVERY_WORKER|LOG_|PORT|HOST)/;
    if (own.test(name)) delete env[name];
  }
  return env;
}

/** The JSON log lines of `output` (the banner and npm's own lines are not JSON). */
function logLines(output: string): Array<Record<string, unknown>> {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The pid of `node …/cli.js serve` in process group `group` (npm's child's child). */
function serverProcessIn(group: number): number {
  const table = execFileSync('ps', ['-eo', 'pid=,pgid=,args='], { encoding: 'utf8' });
  const row = table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find(([, pgid, bin = '', ...args]) => Number(pgid) === group && /node$/.test(bin) && args.at(-1) === 'serve');
  if (row === undefined) throw new Error(`no server process in group ${group}:\n${table}`);
  return Number(row[0]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `npm start` (its own process group) on `storage`, registers an endpoint, makes an event,
 * and once the receiver holds the attempt sends SIGTERM to the whole group. Returns the endpoint
 * id and the server's output once the server process is gone.
 */
async function stopGroupDuringAttempt(storage: Record<string, string>) {
  const receiver = await startReceiver();
  receiver.answer = () => 'hang';
  const child = spawn('npm', ['start'], {
    cwd: root,
    detached: true, // its own process group, as a terminal's foreground job or a systemd unit
    // bash, /bin/sh on macOS and elsewhere, execs the script's last command: the server is then
    // npm's own child and gets npm's forwarded signal too (dash stays between them and takes it).
    env: {
      ...inheritedEnv(),
      npm_config_script_shell: 'bash',
      ...{ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug', LOG_FORMAT: 'json' },
      ...{ API_KEYS, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
      ...storage,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  try {
    await eventually(() => /Parley is listening on (\S+) /.test(output), 60_000, 'npm start listening');
    const base = /Parley is listening on (\S+) /.exec(output)![1]!;
    const serverPid = serverProcessIn(child.pid!);
    const call = apiFor(base, KEY);
    const endpoint = await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] }, 201);
    await call('POST', '/api/agents', { name: 'Ada', description: 'Helps', model: 'modelA-4' }, 201);
    await receiver.waitFor(1, 15_000);

    // systemd (KillMode=control-group) or a terminal signals the whole group; npm then forwards
    // it to its child, the server, a few ms later. Signals that close together may reach the
    // server as one, so the group is signalled again 10 ms later, as systemd or a person might.
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    expect(isAlive(serverPid), output).toBe(true); // still waiting for the attempt
    expect(await receiver.release(204)).toBe(true); // the answer reached a sender still listening
    await eventually(() => !isAlive(serverPid), 15_000, 'server process gone');
    await eventually(() => child.exitCode !== null || child.signalCode !== null, 15_000, 'npm gone');
    return { endpointId: endpoint.id as string, output, lines: logLines(output) };
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    await receiver.close();
  }
}

/** What a run must show in the log: one stop, the attempt delivered while it drained, then stopped. */
function expectDeliveredThenStopped(lines: Array<Record<string, unknown>>, output: string): void {
  expect(output).not.toContain('second signal');
  const at = (msg: string) => {
    const line = lines.find((entry) => entry.msg === msg);
    expect(line, `${msg} in\n${output}`).toBeDefined();
    return { line: line!, time: Date.parse(line!.time as string) };
  };
  const draining = at('draining in-flight requests and delivery attempts before exit');
  const delivered = at('webhook delivered');
  expect(delivered.line).toMatchObject({ status: 204, attempt: 1 });
  // The receiver answered HOLD_MS after the test sent the signals; the server logs `draining` when
  // its handler runs, which on a loaded machine can be some milliseconds after the signal was sent.
  // What matters is that the attempt ended well inside the drain, not before it began.
  expect(delivered.time - draining.time).toBeGreaterThanOrEqual(HOLD_MS - 1_000);
  expect(at('stopped').time).toBeGreaterThanOrEqual(delivered.time);
}

describe('SIGTERM to the process group of `npm start` while a receiver holds an attempt', () => {
  it('on memory: waits for the attempt, logs it delivered, exits', async () => {
    const { lines, output } = await stopGroupDuringAttempt({});
    expectDeliveredThenStopped(lines, output);
  }, 90_000);
});

describeIfAvailable(`Redis at ${REDIS_URL}`, await probeRedis())('on Redis', () => {
  it('waits for the attempt, which the deliveries log shows as delivered', async () => {
    const prefix = uniquePrefix('signal');
    const client = new Redis(REDIS_URL);
    try {
      const storage = { REDIS_URL, REDIS_PREFIX: prefix };
      const { endpointId, lines, output } = await stopGroupDuringAttempt(storage);
      expectDeliveredThenStopped(lines, output);
      const after = await startServerProcess({ ...storage, API_KEYS, DELIVERY_WORKER: 'false' });
      try {
        const log = await apiFor(after.base, KEY)('GET', `/api/webhooks/${endpointId}/deliveries`, undefined, 200);
        expect(log.deliveries).toEqual([expect.objectContaining({ trigger: 'scheduled', status: 204, attempt: 1 })]);
      } finally {
        await after.stop();
      }
    } finally {
      await deletePrefix(client, prefix);
      client.disconnect();
    }
  }, 90_000);
});

describeIfPostgres({ describe, it }, await probePostgres())('on PostgreSQL', () => {
  it('waits for the attempt, which the deliveries log shows as delivered', async () => {
    const database = await createTestDatabase();
    try {
      const storage = { DATABASE_URL: database.url };
      const { endpointId, lines, output } = await stopGroupDuringAttempt(storage);
      expectDeliveredThenStopped(lines, output);
      const after = await startServerProcess({ ...storage, API_KEYS, DELIVERY_WORKER: 'false' });
      try {
        const log = await apiFor(after.base, KEY)('GET', `/api/webhooks/${endpointId}/deliveries`, undefined, 200);
        expect(log.deliveries).toEqual([expect.objectContaining({ trigger: 'scheduled', status: 204, attempt: 1 })]);
      } finally {
        await after.stop();
      }
    } finally {
      await database.drop();
    }
  }, 90_000);
});

describe('a signal more than 1 s after the first', () => {
  it('exits at once, saying so', async () => {
    const receiver = await startReceiver();
    receiver.answer = () => 'hang';
    const server = await startServerProcess({ API_KEYS, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    try {
      const call = apiFor(server.base, KEY);
      await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] }, 201);
      await call('POST', '/api/agents', { name: 'Ada', description: 'Helps', model: 'modelA-4' }, 201);
      await receiver.waitFor(1, 15_000);
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(server.child.exitCode).toBeNull(); // the attempt is still held
      const second = Date.now();
      server.child.kill('SIGTERM');
      expect(await exited).toBe(1);
      expect(Date.now() - second).toBeLessThan(1_000);
      expect(server.output()).toContain('second signal: exiting without waiting');
    } finally {
      await server.stop('SIGKILL');
      await receiver.close();
    }
  }, 30_000);
});
