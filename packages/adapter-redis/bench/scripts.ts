/**
 * @module Benchmark: what a message append and a rate-limit hit cost Redis itself.
 *
 * Run: `npm run bench:scripts -w @parley/adapter-redis [appends]` (REDIS_URL or
 * redis://127.0.0.1:6379; default 20 000 appends). Appends messages to one conversation through
 * the adapter's own `messages.append` (100 in flight), then makes as many rate-limit hits through
 * `RedisRateLimitStore.hit`, in 3 interleaved rounds, and prints for each the median over the
 * rounds of Redis's CPU time per call (`INFO cpu`: the server's whole user + system time, reading
 * the request and writing the reply included), Redis's time inside the script (`INFO
 * commandstats`: the EVALSHA's `usec`, which counts the commands it runs — wall-clock time, so it
 * grows when the machine is busy) and the commands it ran per call. Server-wide counters: run it
 * on a Redis nobody else is using. Deletes its keys at the end. Not part of `npm test`.
 */
import { randomUUID } from 'node:crypto';
import { createUlidGenerator } from '@parley/core/adapter';
import { Records } from '@parley/core/testing';
import { Redis } from 'ioredis';
import { RedisRateLimitStore, redisAdapters } from '../src/index.js';
import { deletePrefix } from '../src/testing/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const count = Number(process.argv[2] ?? 20_000);
const WS = 'ws_bench';
const IN_FLIGHT = 100;
const ROUNDS = 3;

const prefix = `parley-bench:${randomUUID().slice(0, 8)}:`;
const client = new Redis(url);
const { storage } = redisAdapters({ client, prefix, timeoutMs: 60_000 });
const rateLimits = new RedisRateLimitStore({ client, prefix });
const ids = createUlidGenerator();

/** Calls and usec of every command since the last `CONFIG RESETSTAT`. */
async function commandStats(): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const line of (await client.info('commandstats')).split('\r\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (match) stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

/** Redis's own CPU time so far (`used_cpu_user` + `used_cpu_sys`), in µs. */
async function redisCpuUs(): Promise<number> {
  const info = await client.info('cpu');
  const seconds = (field: string) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

interface Figures {
  cpuPerCall: number;
  usecPerScript: number;
  commandsPerCall: number;
}

/** Runs `count` calls of `call`, `IN_FLIGHT` at a time; returns Redis's CPU µs per call, its µs per script call and the commands per call. */
async function measure(call: (i: number) => Promise<unknown>): Promise<Figures> {
  await client.config('RESETSTAT');
  const cpuBefore = await redisCpuUs();
  for (let done = 0; done < count; done += IN_FLIGHT) {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count - done) }, (_, i) => call(done + i)));
  }
  const cpuPerCall = ((await redisCpuUs()) - cpuBefore) / count;
  const stats = await commandStats();
  stats.delete('config|resetstat');
  stats.delete('info');
  const scripts = stats.get('evalsha') ?? { calls: 0, usec: 0 };
  const commands = [...stats.values()].reduce((sum, each) => sum + each.calls, 0);
  return { cpuPerCall, usecPerScript: scripts.usec / scripts.calls, commandsPerCall: commands / count };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const records = new Records();
const agent = await records.insertAgent(storage, WS);
const conversation = await records.insertConversation(storage, WS, agent.id);

const append = async () => {
  const message = records.message(conversation.id, {
    content: 'Hello! I would like to know the status of my order, please.',
  });
  // As the services pass it: the event's data is the message itself.
  await storage.messages.append({ workspaceId: WS }, message, {
    event: { id: ids.next('evt'), type: 'message.sent', workspaceId: WS, occurredAt: message.createdAt, data: message },
  });
};
const rule = { limit: 3_600_000, periodMs: 3_600_000 };
const hit = () => rateLimits.hit(WS, rule, Date.now());

const appends: Figures[] = [];
const hits: Figures[] = [];
try {
  for (let round = 0; round < ROUNDS; round += 1) {
    appends.push(await measure(append));
    hits.push(await measure(hit));
  }
  for (const [name, rows] of [
    ['message append', appends],
    ['rate-limit hit', hits],
  ] as const) {
    const cpu = median(rows.map((row) => row.cpuPerCall)).toFixed(1);
    const usec = median(rows.map((row) => row.usecPerScript)).toFixed(1);
    const commands = median(rows.map((row) => row.commandsPerCall)).toFixed(2);
    console.log(
      `${name.padEnd(15)} ${cpu.padStart(6)} µs of Redis CPU per call, ${usec.padStart(6)} µs inside the script, ${commands} commands per call (median of ${ROUNDS} rounds of ${count})`,
    );
  }
} finally {
  await deletePrefix(client, prefix);
  client.disconnect();
}
