/** @module Conversation streams on memory storage: history, live messages, late commits, resuming, ending. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type Message, type StreamItem } from '../index.js';
import { domainEvent } from '../services/domain-events.js';
import { createUlidGenerator } from '../ports/ids.js';
import { systemClock } from '../ports/clock.js';

async function setup() {
  const adapters = memoryAdapters();
  const ids = createUlidGenerator(() => Date.now());
  const core = createCore(adapters, { ids });
  const agent = await core.agents.create({ workspaceId: 'ws1' }, { name: 'A', description: '', model: 'modelA-4' });
  const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
  return { core, adapters, conversation, ids };
}

/** Reads items until `count` messages came (or `done` for the end). */
async function take(iterator: AsyncIterator<StreamItem>, count: number): Promise<Message[]> {
  const out: Message[] = [];
  while (out.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    if (next.value.type === 'message') out.push(next.value.message);
  }
  return out;
}

describe('openConversationStream', () => {
  it('sends a message committed after a newer one (ids made before racing writes), once, and resumes after it without repeats', async () => {
    // The core's own generator: ids stay monotonic across the test's writes and the core's.
    const { core, adapters, conversation, ids } = await setup();
    const message = (id: string, content: string): Message => ({
      id,
      conversationId: conversation.id,
      content,
      role: 'user',
      metadata: {},
      toolCalls: null,
      toolCallId: null,
      createdAt: new Date().toISOString(),
    });
    const store = async (id: string, content: string) => {
      const stored = message(id, content);
      expect(
        await adapters.storage.messages.append({ workspaceId: 'ws1' }, stored, {
          event: domainEvent(ids, systemClock, 'ws1', 'message.sent', stored),
        }),
      ).toBe('appended');
      await core.feed.publish({ workspaceId: 'ws1' }, conversation.id, { type: 'message', messageId: id });
    };
    const stream = await core.openStream({ workspaceId: 'ws1' }, conversation.id);
    const iterator = stream[Symbol.asyncIterator]();
    const first = core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'user',
      content: 'start',
    });
    expect((await take(iterator, 1)).map((m) => m.content)).toEqual(['start']);
    await first;
    // Made now, stored in the other order: the second write commits first.
    const older = ids.next('msg');
    const newer = ids.next('msg');
    await store(newer, 'newer');
    const seen: StreamItem[] = [];
    let item = await iterator.next();
    seen.push(item.value);
    await store(older, 'older (late)');
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'after' });
    while (seen.filter((s) => s.type === 'message').length < 3) {
      item = await iterator.next();
      seen.push(item.value);
    }
    const messages = seen.filter((s): s is Extract<StreamItem, { type: 'message' }> => s.type === 'message');
    expect(messages.map((s) => s.message.content)).toEqual(['newer', 'older (late)', 'after']);
    // The late one's cursor is the newest sent so far: resuming from it repeats nothing.
    const lateCursor = messages[1]!.cursor;
    await stream.close();
    const resumed = await core.openStream({ workspaceId: 'ws1' }, conversation.id, { after: lateCursor });
    const again = resumed[Symbol.asyncIterator]();
    expect((await take(again, 1)).map((m) => m.content)).toEqual(['after']);
    await resumed.close();
  });

  it('ends with conversation.completed, and close() ends a waiting stream and releases its subscription', async () => {
    const { core, conversation } = await setup();
    const stream = await core.openStream({ workspaceId: 'ws1' }, conversation.id, { idleMs: 60_000 });
    const iterator = stream[Symbol.asyncIterator]();
    const pending = iterator.next();
    await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' });
    expect((await pending).value).toMatchObject({
      type: 'conversation.completed',
      conversation: { status: 'completed' },
    });
    expect((await iterator.next()).done).toBe(true);
    const other = await setup();
    const waiting = await other.core.openStream({ workspaceId: 'ws1' }, other.conversation.id, { idleMs: 60_000 });
    const next = waiting[Symbol.asyncIterator]().next();
    await waiting.close();
    expect((await next).done).toBe(true);
    expect((other.core.feed as unknown as { subscriptionCount: number }).subscriptionCount).toBe(0);
  });
});
