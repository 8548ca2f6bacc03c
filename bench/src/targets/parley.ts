/**
 * @module Parley's ready-made server for the benchmark: `startServer` with the environment's
 * configuration (memory, or Redis with `REDIS_URL`; `LOG_LEVEL`), every feature on — auth, rate
 * limits, request ids, scopes, request log — then seeded in-process through the core (so a
 * 10⁶-message history takes seconds, not an HTTP load of its own).
 *
 * Seeds workspace `bench`: 30 agents, conversations of 10², 10⁴ and `BENCH_LARGE` (default 10⁶)
 * messages, one to append to, one for live streams and 100 more to spread appends over; with
 * `BENCH_WEBHOOK_URL`, a webhook endpoint for `agent.created` there. Prints one JSON line: `{port,
 * key, agentId, conversations: {append, fanOut, small, medium, large}, conversationIds,
 * rssPerMillionMessages}` (`conversationIds`: the 100; RSS in bytes, measured around the large
 * fill). With `BENCH_REUSE` (that line, from an earlier start on the same store) it seeds
 * nothing and prints it again with its new port.
 */
import { ErrorCode, ParleyError, type Message } from '@parley/core';
import { createUlidGenerator } from '@parley/core/adapter';
import { loadConfig, startServer } from '@parley/http/server';

const KEY = 'bench-parley-key-0123456789abcdef';
const WORKSPACE = 'bench';
const LARGE = Number(process.env.BENCH_LARGE ?? 1_000_000);

const running = await startServer(
  loadConfig({
    ...process.env,
    PORT: '0',
    // The largest limit a plan may have (one request per ms): the benchmark measures admitted requests.
    API_KEYS: JSON.stringify([{ key: KEY, workspace: WORKSPACE, plan: 'enterprise', limitPerHour: 3_600_000 }]),
  }),
  { print: () => {} },
);
const { core } = running;

// BENCH_REUSE: a restart on a store this target already seeded (Redis, PostgreSQL, a PGlite
// folder): the same ids, nothing seeded again.
if (process.env.BENCH_REUSE) {
  const seeded = JSON.parse(process.env.BENCH_REUSE) as Record<string, unknown>;
  process.stdout.write(`${JSON.stringify({ ...seeded, port: running.handle.port })}\n`);
  process.on('SIGTERM', () => void running.close().finally(() => process.exit(0)));
  await new Promise(() => {}); // serve until SIGTERM
}

const agents = [];
for (let i = 0; i < 30; i += 1) {
  agents.push(
    await core.agents.create(
      { workspaceId: WORKSPACE },
      { name: `Agent ${i}`, description: 'A benchmark agent', model: 'modelA-4' },
    ),
  );
}
const agentId = agents[0]!.id;

const ids = createUlidGenerator();
/** Appends in flight while filling a large history: on PostgreSQL, few more than its pool's connections (each waits at most 1 s for one). */
const IN_FLIGHT = process.env.DATABASE_URL || process.env.DATA_DIR ? 40 : 500;

/**
 * A conversation with `count` messages. Up to 10⁴ they go through the service, 64 at a time;
 * beyond, straight to the store's `append` (the same atomic write with its event, minus the
 * service's validation and live-stream signal), `IN_FLIGHT` at a time.
 */
async function conversationWith(count: number): Promise<string> {
  const { id } = await core.conversations.create({ workspaceId: WORKSPACE }, { agentId });
  const content = (i: number) => `Benchmark message number ${i}, of a typical length for a chat.`;
  if (count <= 10_000) {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        await core.conversations.sendMessage({ workspaceId: WORKSPACE }, id, {
          role: i % 2 ? 'assistant' : 'user',
          content: content(i),
        });
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    return id;
  }
  for (let done = 0; done < count; done += IN_FLIGHT) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = done; i < Math.min(count, done + IN_FLIGHT); i += 1) {
      const createdAt = new Date().toISOString();
      const message: Message = {
        id: ids.next('msg'),
        conversationId: id,
        content: content(i),
        role: i % 2 ? 'assistant' : 'user',
        metadata: {},
        toolCalls: null,
        toolCallId: null,
        createdAt,
      };
      const type = message.role === 'assistant' ? 'message.received' : 'message.sent';
      const event = {
        id: ids.next('evt'),
        type,
        workspaceId: WORKSPACE,
        occurredAt: createdAt,
        data: message,
      } as const;
      batch.push(retried(() => core.storage.messages.append({ workspaceId: WORKSPACE }, message, { event: event })));
    }
    await Promise.all(batch);
  }
  return id;
}

/**
 * `write()`, tried again (up to 5 times, 100 ms apart) while it fails with `service_unavailable`:
 * seeding 10⁶ messages while other servers seed theirs can push a Redis script past its deadline
 * (docs/guarantees.md). Such a script did nothing; at worst (an answer that came back late) a
 * seeded message is stored twice under one id, which a benchmark's history can afford.
 */
async function retried<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= 5 || !(error instanceof ParleyError) || error.code !== ErrorCode.serviceUnavailable) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const rss = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
};
// With BENCH_WEBHOOK_URL: one endpoint subscribed to agent.created, so each POST agent is delivered.
if (process.env.BENCH_WEBHOOK_URL)
  await core.webhooks.create(
    { workspaceId: WORKSPACE },
    { url: process.env.BENCH_WEBHOOK_URL, events: ['agent.created'] },
  );

const append = await conversationWith(0);
const fanOut = await conversationWith(0);
const conversationIds: string[] = [];
for (let i = 0; i < 100; i += 1) conversationIds.push(await conversationWith(0));
const small = await conversationWith(100);
const medium = await conversationWith(10_000);
const rssBefore = rss();
const large = await conversationWith(LARGE);
const rssPerMillionMessages = Math.round(((rss() - rssBefore) * 1_000_000) / Math.max(LARGE, 1));

process.stdout.write(
  `${JSON.stringify({ port: running.handle.port, key: KEY, agentId, conversations: { append, fanOut, small, medium, large }, conversationIds, rssPerMillionMessages })}\n`,
);
process.on('SIGTERM', () => void running.close().finally(() => process.exit(0)));
