/** @module ConversationService on the memory adapters: conversations, their state, messages and history. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type Conversation, type MessageHistory } from '../index.js';
import { encodeCursor } from './cursor.js';
import { issuePaths, MARK, rejection, sized } from '../test-support/errors.js';
import { ManualClock } from '../testing/clock.js';
import { recordedEvents } from '../test-support/events.js';

const START = '2026-01-01T00:00:00.000Z';

async function setup() {
  const adapters = memoryAdapters();
  const clock = new ManualClock(Date.parse(START));
  const core = createCore(adapters, { clock });
  const agent = await core.agents.create(
    { workspaceId: 'ws1' },
    { name: 'Ada', description: 'helper', model: 'modelA-4' },
  );
  const events = async () => (await recordedEvents(adapters.storage)).slice(1);
  return { core, clock, agent, events, types: async () => (await events()).map((event) => event.type) };
}

describe('ConversationService: conversations', () => {
  it('starts an active conversation with null userId and {} metadata and emits conversation.started', async () => {
    const { core, agent, events } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    expect(conversation).toEqual({
      id: conversation.id,
      agentId: agent.id,
      userId: null,
      metadata: {},
      status: 'active',
      createdAt: START,
      updatedAt: START,
      lastMessageAt: null,
      pendingToolCalls: [],
    });
    expect(conversation.id).toMatch(/^conv_[0-9A-Z]{26}$/);
    expect(await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).toEqual(conversation);
    expect(await events()).toEqual([
      {
        id: expect.stringMatching(/^evt_/),
        type: 'conversation.started',
        workspaceId: 'ws1',
        occurredAt: START,
        data: conversation,
      },
    ]);
    const withUser = await core.conversations.create(
      { workspaceId: 'ws1' },
      { agentId: agent.id, userId: 'u1', metadata: { channel: 'web' } },
    );
    expect(withUser).toMatchObject({ userId: 'u1', metadata: { channel: 'web' } });
  });

  it('a message moves lastMessageAt and updatedAt; a PATCH moves updatedAt; a no-op PATCH moves nothing', async () => {
    const { core, clock, agent } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    clock.advance(1000);
    const message = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'user',
      content: 'Hi',
    });
    expect(await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).toEqual({
      ...conversation,
      updatedAt: message.createdAt,
      lastMessageAt: message.createdAt,
    });
    clock.advance(1000);
    const noop = await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'active' });
    expect(noop.updatedAt).toBe(message.createdAt);
    const completed = await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' });
    expect(completed).toEqual({
      ...conversation,
      status: 'completed',
      updatedAt: new Date(clock.now()).toISOString(),
      lastMessageAt: message.createdAt,
    });
  });

  it('delete removes the conversation and its messages, emitting conversation.deleted (not_found after, and for another workspace); getMessage reads one', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    const message = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'assistant',
      content: 'Hello',
    });
    expect(await core.conversations.getMessage({ workspaceId: 'ws1' }, conversation.id, message.id)).toEqual(message);
    expect(
      (await rejection(core.conversations.getMessage({ workspaceId: 'ws1' }, conversation.id, 'msg_missing'))).code,
    ).toBe('not_found');
    expect(
      (await rejection(core.conversations.getMessage({ workspaceId: 'ws2' }, conversation.id, message.id))).code,
    ).toBe('not_found');
    expect((await rejection(core.conversations.delete({ workspaceId: 'ws2' }, conversation.id))).code).toBe(
      'not_found',
    );
    const before = await types();
    await core.conversations.delete({ workspaceId: 'ws1' }, conversation.id);
    expect(await types()).toEqual([...before, 'conversation.deleted']);
    expect((await rejection(core.conversations.get({ workspaceId: 'ws1' }, conversation.id))).code).toBe('not_found');
    expect(
      (await rejection(core.conversations.getMessage({ workspaceId: 'ws1' }, conversation.id, message.id))).code,
    ).toBe('not_found');
    expect((await rejection(core.conversations.delete({ workspaceId: 'ws1' }, conversation.id))).code).toBe(
      'not_found',
    );
  });

  it('refuses an unknown agent or one of another workspace (not_found) and an inactive agent (conflict)', async () => {
    const { core, agent, events } = await setup();
    const foreign = await core.agents.create({ workspaceId: 'ws2' }, { name: 'B', description: '', model: 'modelB-3' });
    expect((await rejection(core.conversations.create({ workspaceId: 'ws1' }, { agentId: 'agt_unknown' }))).code).toBe(
      'not_found',
    );
    expect((await rejection(core.conversations.create({ workspaceId: 'ws1' }, { agentId: foreign.id }))).code).toBe(
      'not_found',
    );
    await core.agents.update({ workspaceId: 'ws1' }, agent.id, { status: 'inactive' });
    expect((await rejection(core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id }))).code).toBe(
      'conflict',
    );
    expect((await core.conversations.list({ workspaceId: 'ws1' })).total).toBe(0);
    expect((await events()).map((event) => event.type)).toEqual(['agent.updated']);
    await core.agents.update({ workspaceId: 'ws1' }, agent.id, { status: 'active' });
    expect((await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id })).status).toBe('active');
  });

  it('gets and lists only within the workspace; lists newest first, filtered and paged', async () => {
    const { core, clock, agent } = await setup();
    const other = await core.agents.create({ workspaceId: 'ws1' }, { name: 'B', description: '', model: 'modelB-3' });
    const made: Conversation[] = [];
    for (const [agentId, userId] of [
      [agent.id, 'u1'],
      [other.id, 'u1'],
      [agent.id, 'u2'],
      [agent.id, undefined],
    ] as const) {
      clock.advance(1000);
      made.unshift(await core.conversations.create({ workspaceId: 'ws1' }, { agentId, userId }));
    }
    await core.conversations.update({ workspaceId: 'ws1' }, made[1]!.id, { status: 'completed' });
    const completed = await core.conversations.get({ workspaceId: 'ws1' }, made[1]!.id);
    expect((await rejection(core.conversations.get({ workspaceId: 'ws2' }, made[0]!.id))).code).toBe('not_found');
    expect(await core.conversations.list({ workspaceId: 'ws2' })).toEqual({
      conversations: [],
      total: 0,
      page: 1,
      limit: 20,
    });

    const ids = async (query: Record<string, unknown>) => {
      const list = await core.conversations.list({ workspaceId: 'ws1' }, query);
      return { ...list, conversations: list.conversations.map((conversation) => conversation.id) };
    };
    const [c4, c3, c2, c1] = made.map((conversation) => conversation.id);
    expect(await ids({})).toEqual({ conversations: [c4, c3, c2, c1], total: 4, page: 1, limit: 20 });
    expect(await ids({ page: '2', limit: '3' })).toEqual({ conversations: [c1], total: 4, page: 2, limit: 3 });
    expect(await ids({ agentId: agent.id })).toMatchObject({ conversations: [c4, c3, c1], total: 3 });
    expect(await ids({ userId: 'u1' })).toMatchObject({ conversations: [c2, c1], total: 2 });
    expect(await ids({ status: 'completed' })).toMatchObject({ conversations: [completed.id], total: 1 });
    expect(await ids({ agentId: agent.id, status: 'active', limit: 1, page: 2 })).toMatchObject({
      conversations: [c1],
      total: 2,
    });
    for (const query of [
      { page: 0 },
      { limit: 101 },
      { limit: '0' },
      { status: 'closed' },
      { agentId: '' },
      { order: 'asc' },
    ]) {
      expect(
        (await rejection(core.conversations.list({ workspaceId: 'ws1' }, query as never))).code,
        JSON.stringify(query),
      ).toBe('validation_failed');
    }
  });

  it('completes once: the transition emits conversation.completed, completing again is a no-op', async () => {
    const { core, agent, events, types } = await setup();
    const conversation = await core.conversations.create(
      { workspaceId: 'ws1' },
      { agentId: agent.id, metadata: { a: 1 } },
    );
    const completed = await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' });
    expect(completed).toEqual({ ...conversation, status: 'completed' });
    expect((await events())[1]).toMatchObject({ type: 'conversation.completed', data: completed });
    expect(await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' })).toEqual(
      completed,
    );
    expect(await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).toEqual(completed);
    expect(await types()).toEqual(['conversation.started', 'conversation.completed']);
  });

  it('emits conversation.completed once when several requests complete it at the same time', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    const results = await Promise.all(
      [1, 2, 3].map((n) =>
        core.conversations.update({ workspaceId: 'ws1' }, conversation.id, {
          status: 'completed',
          metadata: { by: n },
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed']);
    expect(await types()).toEqual(['conversation.started', 'conversation.completed']);
    // Every request's metadata was applied in turn: none was lost to the race.
    expect((await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).metadata).toEqual(
      results[2]!.metadata,
    );
  });

  it('keeps active a no-op while active and refuses reactivating a completed conversation (conflict)', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    expect(await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'active' })).toEqual(
      conversation,
    );
    await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' });
    const error = await rejection(
      core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'active', metadata: { b: 2 } }),
    );
    expect(error.code).toBe('conflict');
    expect(await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).toEqual({
      ...conversation,
      status: 'completed',
    });
    expect(await types()).toEqual(['conversation.started', 'conversation.completed']);
  });

  it('replaces metadata as a whole without emitting, also on a completed conversation', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create(
      { workspaceId: 'ws1' },
      { agentId: agent.id, metadata: { a: 1, b: 2 } },
    );
    expect(await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { metadata: { c: 3 } })).toEqual({
      ...conversation,
      metadata: { c: 3 },
    });
    await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' });
    const updated = await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, {
      status: 'completed',
      metadata: {},
    });
    expect(updated).toEqual({ ...conversation, metadata: {}, status: 'completed' });
    expect(await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).toEqual(updated);
    expect(await types()).toEqual(['conversation.started', 'conversation.completed']);
    expect(
      (await rejection(core.conversations.update({ workspaceId: 'ws2' }, conversation.id, { metadata: {} }))).code,
    ).toBe('not_found');
    expect(
      (await rejection(core.conversations.update({ workspaceId: 'ws1' }, 'conv_unknown', { status: 'completed' })))
        .code,
    ).toBe('not_found');
  });

  it('refuses invalid conversation fields with validation_failed, without echoing them', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    const inputs: Array<[Record<string, unknown>, string]> = [
      [{ agentId: undefined }, 'agentId'],
      [{ agentId: '' }, 'agentId'],
      [{ userId: '' }, 'userId'],
      [{ userId: sized(257) }, 'userId'],
      [{ metadata: [MARK] }, 'metadata'],
      [{ metadata: MARK }, 'metadata'],
      [{ metadata: { k: `${MARK}${'x'.repeat(16 * 1024)}` } }, 'metadata'],
      [{ metadata: { a: { b: { c: { d: { e: { f: { g: { h: { i: MARK } } } } } } } } } }, 'metadata'],
      [{ metadata: JSON.parse(`{"__proto__": "${MARK}"}`) }, 'metadata'],
      [{ metadata: { constructor: MARK } }, 'metadata'],
      [{ metadata: { nested: { prototype: MARK } } }, 'metadata'],
      [{ status: 'active' }, 'status'],
      [{ topic: MARK }, 'topic'],
    ];
    for (const [fields, path] of inputs) {
      const error = await rejection(
        core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id, ...fields } as never),
      );
      expect(error.code, path).toBe('validation_failed');
      expect(issuePaths(error).includes(path), `${path} in ${issuePaths(error).join()}`).toBe(true);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(MARK);
    }
    for (const body of [undefined, null, 'text', []]) {
      for (const call of [
        () => core.conversations.create({ workspaceId: 'ws1' }, body as never),
        () => core.conversations.update({ workspaceId: 'ws1' }, conversation.id, body as never),
        () => core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, body as never),
      ]) {
        const error = await rejection(call());
        expect([error.code, issuePaths(error)], JSON.stringify(body)).toEqual(['validation_failed', ['body']]);
      }
    }
    for (const [patch, path] of [
      [{ status: 'archived' }, 'status'],
      [{ metadata: null }, 'metadata'],
      [{ agentId: agent.id }, 'agentId'],
    ] as const) {
      const error = await rejection(core.conversations.update({ workspaceId: 'ws1' }, conversation.id, patch as never));
      expect([error.code, issuePaths(error)]).toEqual(['validation_failed', [path]]);
    }
    expect((await core.conversations.list({ workspaceId: 'ws1' })).total).toBe(1);
    expect(await types()).toEqual(['conversation.started']);
  });
});

describe('ConversationService: messages', () => {
  it('stores messages and emits message.sent for user and system, message.received for assistant', async () => {
    const { core, clock, agent, events } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    clock.advance(250);
    const user = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'user',
      content: 'Hi',
      metadata: { lang: 'en' },
    });
    expect(user).toEqual({
      id: user.id,
      conversationId: conversation.id,
      content: 'Hi',
      role: 'user',
      metadata: { lang: 'en' },
      toolCalls: null,
      toolCallId: null,
      createdAt: '2026-01-01T00:00:00.250Z',
    });
    expect(user.id).toMatch(/^msg_[0-9A-Z]{26}$/);
    const assistant = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'assistant',
      content: 'Hello!',
    });
    const system = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'system',
      content: 'Be kind.',
    });
    expect(system.metadata).toEqual({});
    expect((await events()).slice(1).map((event) => [event.type, event.data])).toEqual([
      ['message.sent', user],
      ['message.received', assistant],
      ['message.sent', system],
    ]);
    expect(await core.conversations.history({ workspaceId: 'ws1' }, conversation.id)).toEqual({
      messages: [user, assistant, system],
      hasMore: false,
    });
  });

  it('refuses messages to a completed conversation (conflict) and to unknown or foreign ones (not_found)', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    expect(
      (
        await rejection(
          core.conversations.sendMessage({ workspaceId: 'ws2' }, conversation.id, { role: 'user', content: 'x' }),
        )
      ).code,
    ).toBe('not_found');
    expect(
      (
        await rejection(
          core.conversations.sendMessage({ workspaceId: 'ws1' }, 'conv_unknown', { role: 'user', content: 'x' }),
        )
      ).code,
    ).toBe('not_found');
    await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' });
    expect(
      (
        await rejection(
          core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'x' }),
        )
      ).code,
    ).toBe('conflict');
    expect(await core.conversations.history({ workspaceId: 'ws1' }, conversation.id)).toEqual({
      messages: [],
      hasMore: false,
    });
    expect(await types()).toEqual(['conversation.started', 'conversation.completed']);
  });

  it('checks message fields: content 1–100000 characters, role, metadata, no unknown fields', async () => {
    const { core, agent, types } = await setup();
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    expect(
      (
        await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
          role: 'user',
          content: 'c'.repeat(100_000),
        })
      ).content,
    ).toHaveLength(100_000);
    const inputs: Array<[Record<string, unknown>, string]> = [
      [{ content: '' }, 'content'],
      [{ content: sized(100_001) }, 'content'],
      [{ content: undefined }, 'content'],
      [{ content: 7 }, 'content'],
      [{ role: MARK }, 'role'],
      [{ role: undefined }, 'role'],
      [{ metadata: [MARK] }, 'metadata'],
      [{ metadata: JSON.parse(`{"x": {"__proto__": "${MARK}"}}`) }, 'metadata'],
      [{ conversationId: MARK }, 'conversationId'],
    ];
    for (const [fields, path] of inputs) {
      const error = await rejection(
        core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
          role: 'user',
          content: 'ok',
          ...fields,
        } as never),
      );
      expect([error.code, issuePaths(error)], path).toEqual(['validation_failed', [path]]);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(MARK);
    }
    // Schema failures come before the resource lookup (docs/errors.md).
    expect(
      (
        await rejection(
          core.conversations.sendMessage({ workspaceId: 'ws1' }, 'conv_unknown', { role: 'user', content: '' }),
        )
      ).code,
    ).toBe('validation_failed');
    expect((await core.conversations.history({ workspaceId: 'ws1' }, conversation.id)).messages).toHaveLength(1);
    expect(await types()).toEqual(['conversation.started', 'message.sent']);
  });
});

describe('ConversationService: history', () => {
  async function withMessages(count: number) {
    const context = await setup();
    const conversation = await context.core.conversations.create({ workspaceId: 'ws1' }, { agentId: context.agent.id });
    const sent = [];
    for (let index = 0; index < count; index += 1) {
      sent.push(
        await context.core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
          role: index % 2 ? 'assistant' : 'user',
          content: `m${index}`,
        }),
      );
    }
    return { ...context, conversation, sent };
  }

  it('walks 250 messages with limit 100 as pages of 100, 100 and 50; nextCursor exactly when hasMore', async () => {
    const { core, conversation, sent } = await withMessages(250);
    const pages: MessageHistory[] = [];
    let before: string | undefined;
    do {
      const page = await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { limit: 100, before });
      expect('nextCursor' in page).toBe(page.hasMore);
      pages.push(page);
      before = page.nextCursor;
    } while (before !== undefined && pages.length < 5);
    expect(pages.map((page) => [page.messages.length, page.hasMore])).toEqual([
      [100, true],
      [100, true],
      [50, false],
    ]);
    expect(pages.reverse().flatMap((page) => page.messages)).toEqual(sent);
  });

  it('defaults to the 50 newest messages, takes limit as a digit string, and pages an empty history', async () => {
    const { core, conversation, sent } = await withMessages(60);
    const page = await core.conversations.history({ workspaceId: 'ws1' }, conversation.id);
    expect(page.messages).toEqual(sent.slice(10));
    expect(page.hasMore).toBe(true);
    const small = await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, {
      limit: '3',
      before: page.nextCursor,
    });
    expect(small.messages).toEqual(sent.slice(7, 10));
    const empty = await core.conversations.create(
      { workspaceId: 'ws1' },
      { agentId: (await core.conversations.get({ workspaceId: 'ws1' }, conversation.id)).agentId },
    );
    expect(await core.conversations.history({ workspaceId: 'ws1' }, empty.id)).toEqual({
      messages: [],
      hasMore: false,
    });
    const exact = await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, {
      limit: 10,
      before: encodeCursor(conversation.id, sent[10]!.id),
    });
    expect(exact).toEqual({ messages: sent.slice(0, 10), hasMore: false });
  });

  it('refuses foreign, garbage and forged cursors with invalid_request', async () => {
    const { core, agent, conversation, sent } = await withMessages(3);
    const other = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    const foreignMessage = await core.conversations.sendMessage({ workspaceId: 'ws1' }, other.id, {
      role: 'user',
      content: 'x',
    });
    const cursors = [
      encodeCursor(other.id, foreignMessage.id),
      encodeCursor(conversation.id, foreignMessage.id),
      encodeCursor(conversation.id, 'msg_01JAAAAAAAAAAAAAAAAAAAAAAA'),
      encodeCursor(conversation.id, `${sent[1]!.id}x`),
      'not-a-cursor',
      Buffer.from(`v2:${conversation.id}:${sent[1]!.id}`).toString('base64url'),
      Buffer.from(`v1:${conversation.id}:${sent[1]!.id}:extra`).toString('base64url'),
      Buffer.from(`v1:${conversation.id}:`).toString('base64url'),
    ];
    for (const before of cursors) {
      expect(
        (await rejection(core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { before }))).code,
        before,
      ).toBe('invalid_request');
    }
    const valid = (await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { limit: 2 })).nextCursor!;
    expect(
      (await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { before: valid })).messages,
    ).toEqual(sent.slice(0, 1));
    expect(
      (await rejection(core.conversations.history({ workspaceId: 'ws1' }, other.id, { before: valid }))).code,
    ).toBe('invalid_request');
    expect(
      (await rejection(core.conversations.history({ workspaceId: 'ws2' }, conversation.id, { before: valid }))).code,
    ).toBe('not_found');
  });

  it('refuses history queries out of range with validation_failed and unknown conversations with not_found', async () => {
    const { core, conversation } = await withMessages(1);
    for (const query of [
      { limit: 0 },
      { limit: 101 },
      { limit: '1.5' },
      { limit: 'all' },
      { before: '' },
      { after: '' },
      { since: 'x' },
      { before: 'a', after: 'b' },
    ]) {
      expect(
        (await rejection(core.conversations.history({ workspaceId: 'ws1' }, conversation.id, query as never))).code,
        JSON.stringify(query),
      ).toBe('validation_failed');
    }
    expect(
      (await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { limit: 100 })).messages,
    ).toHaveLength(1);
    expect((await rejection(core.conversations.history({ workspaceId: 'ws1' }, 'conv_unknown'))).code).toBe(
      'not_found',
    );
  });
});
