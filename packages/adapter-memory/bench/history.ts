/**
 * @module Benchmark: a memory history page at 1 000 000 messages costs what it costs at 100.
 *
 * Run: `npx tsx packages/adapter-memory/bench/history.ts [messages]`. Fills one conversation with
 * `messages` (default 1 000 000) and one with 100 through `MemoryStorage.messages.append`, then
 * measures the median and p99 latency of `messages.page` (limit 50: the newest page, and a cursor
 * deep in the history) for both, interleaved in one run so noise hits every case alike, and
 * prints the figures and the large/small ratio. A page is a binary search plus a slice, so the
 * ratio should stay near 1. Not part of `npm test`.
 */
import type { Agent, DomainEvent, EventType, Message } from '@parley/core';
import { createUlidGenerator } from '@parley/core/adapter';
import { MemoryStorage } from '../src/index.js';

const total = Number(process.argv[2] ?? 1_000_000);
const WS = 'ws_bench';
const LIMIT = 50;
const ROUNDS = 20_000;

const storage = new MemoryStorage();
const ids = createUlidGenerator();
const now = new Date().toISOString();
const agent: Agent = {
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
  status: 'active',
  createdAt: now,
  updatedAt: now,
};
// Every write records its event, as the services' writes do.
const event = (type: EventType, data: DomainEvent['data']): DomainEvent => ({
  id: ids.next('evt'),
  type,
  workspaceId: WS,
  occurredAt: now,
  data,
});
await storage.agents.insert({ workspaceId: WS }, agent, { event: event('agent.created', agent) });

async function conversationWith(count: number): Promise<{ id: string; messageIds: string[] }> {
  const id = ids.next('conv');
  const conversation = {
    id,
    agentId: agent.id,
    userId: null,
    metadata: {},
    status: 'active' as const,
    createdAt: now,
    updatedAt: now,
    lastMessageAt: null,
    pendingToolCalls: [],
  };
  await storage.conversations.insert({ workspaceId: WS }, conversation, {
    event: event('conversation.started', conversation),
  });
  const messageIds: string[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const message: Message = {
      id: ids.next('msg'),
      conversationId: id,
      content: `message ${i}`,
      role: 'user',
      metadata: {},
      toolCalls: null,
      toolCallId: null,
      createdAt: now,
    };
    messageIds.push(message.id);
    await storage.messages.append({ workspaceId: WS }, message, { event: event('message.sent', message) });
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`filled ${count.toLocaleString('en')} messages in ${seconds.toFixed(1)} s`);
  return { id, messageIds };
}

const large = await conversationWith(total);
const small = await conversationWith(100);
const cases = [
  { name: 'large: newest page', conversationId: large.id },
  { name: 'small: newest page', conversationId: small.id },
  { name: 'large: cursor in the middle', conversationId: large.id, before: large.messageIds[total >> 1] },
  { name: 'large: cursor near the oldest', conversationId: large.id, before: large.messageIds[LIMIT + 10] },
  { name: 'small: cursor near the oldest', conversationId: small.id, before: small.messageIds[LIMIT + 10] },
];

const samples = new Map(cases.map((c) => [c.name, [] as number[]]));
for (let round = -2_000; round < ROUNDS; round += 1) {
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

const median = (name: string) => quantile(name, 0.5);
function quantile(name: string, q: number): number {
  const sorted = [...samples.get(name)!].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
console.log(`messages.page, limit ${LIMIT}, ${ROUNDS} rounds each (median / p99, µs):`);
for (const c of cases) {
  console.log(
    `  ${c.name.padEnd(32)} ${(median(c.name) * 1000).toFixed(1).padStart(7)} / ${(quantile(c.name, 0.99) * 1000).toFixed(1).padStart(7)}`,
  );
}
console.log(
  `ratio large/small, newest page:        ${(median('large: newest page') / median('small: newest page')).toFixed(2)}`,
);
console.log(
  `ratio large/small, cursor near oldest: ${(median('large: cursor near the oldest') / median('small: cursor near the oldest')).toFixed(2)}`,
);
