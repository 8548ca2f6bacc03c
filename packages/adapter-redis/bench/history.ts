/**
 * @module Benchmark: a history page at 1 000 000 messages costs what it costs at 100.
 *
 * Run: `npx tsx packages/adapter-redis/bench/history.ts [messages]` (REDIS_URL or
 * redis://127.0.0.1:6379). Fills one conversation with `messages` (default 1 000 000) through
 * the adapter's own `append` (pipelined: many in flight at once) and one with 100, measures the
 * median and p99 latency of `messages.page` (limit 50: newest page, and deep cursors) for both,
 * interleaved in one run, prints the figures and the ratio, then deletes everything through the
 * agent cascade and checks the key prefix is empty. Not part of `npm test`.
 */
import { randomUUID } from 'node:crypto';
import type { DomainEvent, EventType, Message } from '@parley/core';
import { createUlidGenerator } from '@parley/core/adapter';
import { Redis } from 'ioredis';
import { redisAdapters } from '../src/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const total = Number(process.argv[2] ?? 1_000_000);
const WS = 'ws_bench';
const LIMIT = 50;
const IN_FLIGHT = 5_000;
const ROUNDS = 2_000;

const prefix = `parley-bench:${randomUUID().slice(0, 8)}:`;
// A generous deadline: the bulk load keeps thousands of calls in flight.
const client = new Redis(url);
const redis = redisAdapters({ client, prefix, timeoutMs: 60_000 });
const { storage } = redis;
const ids = createUlidGenerator();

/** The event a write records with it (every message append records one too). */
const event = (type: EventType, data: DomainEvent['data']): DomainEvent => ({
  id: ids.next('evt'),
  type,
  workspaceId: WS,
  occurredAt: new Date().toISOString(),
  data,
});

async function fill(conversationId: string, count: number): Promise<string[]> {
  const messageIds: string[] = [];
  const started = performance.now();
  for (let done = 0; done < count; done += IN_FLIGHT) {
    const batch: Message[] = [];
    for (let i = done; i < Math.min(count, done + IN_FLIGHT); i += 1) {
      const id = ids.next('msg');
      messageIds.push(id);
      batch.push({
        id,
        conversationId,
        content: `message ${i}`,
        role: i % 2 ? 'assistant' : 'user',
        metadata: {},
        toolCalls: null,
        toolCallId: null,
        createdAt: new Date().toISOString(),
      });
    }
    const stored = await Promise.all(
      batch.map((message) =>
        storage.messages.append({ workspaceId: WS }, message, {
          event: event(message.role === 'assistant' ? 'message.received' : 'message.sent', message),
        }),
      ),
    );
    if (stored.some((outcome) => outcome !== 'appended')) throw new Error('append did not append');
    if (count >= 100_000 && (done / IN_FLIGHT) % 40 === 0) process.stdout.write(`  ${done.toLocaleString('en')} …\r`);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `filled ${count.toLocaleString('en')} messages in ${seconds.toFixed(1)} s (${Math.round(count / seconds).toLocaleString('en')}/s)`,
  );
  return messageIds;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function measure(cases: Array<{ name: string; conversationId: string; before?: string }>) {
  const samples = new Map(cases.map((c) => [c.name, [] as number[]]));
  for (let round = -200; round < ROUNDS; round += 1) {
    // Interleaved, so drift (GC, other load) hits every case alike; the first 200 are warm-up.
    for (const c of cases) {
      const started = performance.now();
      const page = await storage.messages.page({ workspaceId: WS }, c.conversationId, {
        limit: LIMIT,
        ...(c.before ? { before: c.before } : {}),
      });
      const elapsed = performance.now() - started;
      if (!page || page.messages.length !== LIMIT) throw new Error(`${c.name}: unexpected page`);
      if (round >= 0) samples.get(c.name)!.push(elapsed);
    }
  }
  return new Map(
    [...samples].map(([name, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return [name, { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }];
    }),
  );
}

async function main() {
  const createdAt = new Date().toISOString();
  const agent = {
    id: ids.next('agt'),
    name: 'Bench',
    description: '',
    model: 'modelA-4',
    systemPrompt: null,
    temperature: null,
    maxTokens: null,
    configuration: {},
    tools: [],
    maxSteps: 8,
    autoReply: true,
    mcpServers: [],
    status: 'active' as const,
    createdAt,
    updatedAt: createdAt,
  };
  await storage.agents.insert({ workspaceId: WS }, agent, { event: event('agent.created', agent) });
  const conversation = (id: string) => ({
    id,
    agentId: agent.id,
    userId: null,
    metadata: {},
    status: 'active' as const,
    createdAt,
    updatedAt: createdAt,
    lastMessageAt: null,
    pendingToolCalls: [],
  });
  const big = conversation(ids.next('conv'));
  const small = conversation(ids.next('conv'));
  await storage.conversations.insert({ workspaceId: WS }, big, { event: event('conversation.started', big) });
  await storage.conversations.insert({ workspaceId: WS }, small, { event: event('conversation.started', small) });

  console.log(`Redis ${url}, prefix ${prefix}`);
  const bigIds = await fill(big.id, total);
  const smallIds = await fill(small.id, 100);

  const results = await measure([
    { name: 'large: newest page', conversationId: big.id },
    { name: 'small: newest page', conversationId: small.id },
    { name: 'large: cursor in the middle', conversationId: big.id, before: bigIds[Math.floor(total / 2)] },
    { name: 'large: cursor near the oldest', conversationId: big.id, before: bigIds[LIMIT + 10] },
    { name: 'small: cursor near the oldest', conversationId: small.id, before: smallIds[LIMIT + 10] },
  ]);
  console.log(`\nmessages.page, limit ${LIMIT}, ${ROUNDS} rounds each (median / p99, ms):`);
  for (const [name, { median, p99 }] of results)
    console.log(`  ${name.padEnd(32)} ${median.toFixed(3).padStart(7)} / ${p99.toFixed(3).padStart(7)}`);
  const ratio = (a: string, b: string) => (results.get(a)!.median / results.get(b)!.median).toFixed(2);
  console.log(`\nratio large/small, newest page:        ${ratio('large: newest page', 'small: newest page')}`);
  console.log(
    `ratio large/small, cursor near oldest: ${ratio('large: cursor near the oldest', 'small: cursor near the oldest')}`,
  );
  console.log(
    `(${total.toLocaleString('en')} vs 100 messages: O(n) would be ${(total / 100).toLocaleString('en')}×, O(log n + limit) ≈ 1×)`,
  );

  const started = performance.now();
  await storage.agents.delete({ workspaceId: WS }, agent.id, {
    event: { id: ids.next('evt'), type: 'agent.deleted', workspaceId: WS, occurredAt: new Date().toISOString() },
  });
  console.log(`\nagent delete with cascade (UNLINK of the histories): ${(performance.now() - started).toFixed(1)} ms`);
}

try {
  await main();
} finally {
  // Whatever happened, leave nothing behind (SCAN is fine here: this is not a request path).
  let left = 0;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    left += keys.length;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
  console.log(`keys left under the prefix after the cascade: ${left} (now removed)`);
  await redis.close();
  await client.quit();
}
