/**
 * @module Parley's ready-made server for the benchmark: `startServer` with the environment's
 * configuration (memory, or Redis with `REDIS_URL`; `LOG_LEVEL`), every feature on — auth, rate
 * limits, request ids, scopes, request log — then seeded in-process through the core (so a
 * 10⁶-message history takes seconds, not an HTTP load of its own).
 *
 * Seeds workspace `bench`: 30 agents, conversations of 10², 10⁴ and `BENCH_LARGE` (default 10⁶)
 * messages, and one to append to. Prints one JSON line: `{port, key, agentId, conversations:
 * {append, small, medium, large}, rssPerMillionMessages}` (bytes, measured around the large fill).
 */
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

const agents = [];
for (let i = 0; i < 30; i += 1) {
  agents.push(await core.agents.create(WORKSPACE, { name: `Agent ${i}`, description: 'A benchmark agent', model: 'modelA-4' }));
}
const agentId = agents[0]!.id;

/** A conversation with `count` messages, appended `concurrency` at a time. */
async function conversationWith(count: number, concurrency = 64): Promise<string> {
  const { id } = await core.conversations.create(WORKSPACE, { agentId });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await core.conversations.sendMessage(WORKSPACE, id, { role: i % 2 ? 'assistant' : 'user', content: `Benchmark message number ${i}, of a typical length for a chat.` });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return id;
}

const rss = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
};
const append = await conversationWith(0);
const small = await conversationWith(100);
const medium = await conversationWith(10_000);
const rssBefore = rss();
const large = await conversationWith(LARGE);
const rssPerMillionMessages = Math.round(((rss() - rssBefore) * 1_000_000) / Math.max(LARGE, 1));

process.stdout.write(`${JSON.stringify({ port: running.handle.port, key: KEY, agentId, conversations: { append, small, medium, large }, rssPerMillionMessages })}\n`);
process.on('SIGTERM', () => void running.close().finally(() => process.exit(0)));
