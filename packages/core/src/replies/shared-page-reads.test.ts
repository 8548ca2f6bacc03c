/** @module Shared history reads: many streams after one signal cost one read, and no stream gets a read older than its signal. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type StreamItem } from '../index.js';
import type { MessagePage } from '../ports/storage.js';
import { createUlidGenerator } from '../ports/ids.js';
import { SharedPageReads } from './shared-page-reads.js';

/** A memory core whose history reads are counted, and whose answers wait for `counted.held` when set. */
async function setup() {
  const adapters = memoryAdapters();
  const messages = adapters.storage.messages;
  const read = messages.page.bind(messages);
  const counted = { reads: 0, held: null as Promise<void> | null };
  messages.page = async (...args) => {
    counted.reads += 1;
    // Read now, answer later: a held read's answer is what storage held when it started.
    const page = await read(...args);
    if (counted.held) await counted.held;
    return page;
  };
  const core = createCore(adapters, { ids: createUlidGenerator(() => Date.now()) });
  const agent = await core.agents.create({ workspaceId: 'ws1' }, { name: 'A', description: '', model: 'modelA-4' });
  const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
  return { core, storage: adapters.storage, conversation, counted };
}

const contents = (page: MessagePage | null) => page?.messages.map((message) => message.content);

describe('SharedPageReads', () => {
  it('gives concurrent identical reads started after the mark one storage read, and starts a new one once it settled', async () => {
    const { core, storage, conversation, counted } = await setup();
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'one' });
    const reads = new SharedPageReads(storage);
    const mark = reads.mark();
    const pages = await Promise.all(
      Array.from({ length: 5 }, () => reads.page({ workspaceId: 'ws1' }, conversation.id, { limit: 10 }, mark)),
    );
    expect(counted.reads).toBe(1);
    expect(pages.map(contents)).toEqual(Array.from({ length: 5 }, () => ['one']));
    await reads.page({ workspaceId: 'ws1' }, conversation.id, { limit: 10 }, mark);
    expect(counted.reads).toBe(2);
    // Different queries are different reads.
    await Promise.all([
      reads.page({ workspaceId: 'ws1' }, conversation.id, { limit: 10 }, mark),
      reads.page({ workspaceId: 'ws1' }, conversation.id, { limit: 5 }, mark),
    ]);
    expect(counted.reads).toBe(4);
  });

  it('never hands a read that started before the mark: a message committed in between is in the answer', async () => {
    const { core, storage, conversation, counted } = await setup();
    const reads = new SharedPageReads(storage);
    let release!: () => void;
    counted.held = new Promise((resolve) => (release = resolve));
    const early = reads.page({ workspaceId: 'ws1' }, conversation.id, { limit: 10 }, reads.mark());
    await new Promise((resolve) => setTimeout(resolve, 10));
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'late' });
    // As a stream's signal does after the commit.
    const mark = reads.mark();
    counted.held = null;
    const after = reads.page({ workspaceId: 'ws1' }, conversation.id, { limit: 10 }, mark);
    release();
    expect(contents(await early)).toEqual([]);
    expect(contents(await after)).toEqual(['late']);
    expect(counted.reads).toBe(2);
  });

  it('lets 200 streams of one conversation receive a message with a handful of reads, not one each', async () => {
    const { core, conversation, counted } = await setup();
    const streams = await Promise.all(
      Array.from({ length: 200 }, () => core.openStream({ workspaceId: 'ws1' }, conversation.id, { idleMs: 60_000 })),
    );
    const firstItems = streams.map((stream) => stream[Symbol.asyncIterator]().next());
    // Every stream has read its (empty) history and waits for a signal.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const opened = counted.reads;
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'user',
      content: 'to everyone',
    });
    const items = (await Promise.all(firstItems)).map((next) => next.value as StreamItem);
    expect(items.map((item) => (item.type === 'message' ? item.message.content : item.type))).toEqual(
      Array.from({ length: 200 }, () => 'to everyone'),
    );
    expect(counted.reads - opened).toBeLessThanOrEqual(3);
    await Promise.all(streams.map((stream) => stream.close()));
  });
});
