/** @module EventService on the memory adapters: the API's view of the event log, cursors and retention. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type ApiEvent } from '../index.js';
import { issuePaths, rejection } from '../test-support/errors.js';
import { ManualClock } from '../testing/clock.js';

const START = '2026-01-01T00:00:00.000Z';
const DAY_MS = 24 * 60 * 60 * 1000;

function setup() {
  const clock = new ManualClock(Date.parse(START));
  const adapters = memoryAdapters({ storage: { clock, eventRetentionMs: 14 * DAY_MS } });
  const core = createCore(adapters, { clock });
  return { core, clock };
}

/** Every event of the workspace, walking `nextCursor` pages of `limit`. */
async function walk(
  core: ReturnType<typeof setup>['core'],
  limit: number,
  type?: ApiEvent['type'],
): Promise<ApiEvent[]> {
  const events: ApiEvent[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await core.events.list(
      { workspaceId: 'ws1' },
      { limit, ...(after && { after }), ...(type && { type }) },
    );
    expect(page.events.length).toBeLessThanOrEqual(limit);
    expect(page.nextCursor !== undefined).toBe(page.hasMore);
    events.push(...page.events);
    if (!page.hasMore) return events;
    after = page.nextCursor;
  }
  throw new Error('The event list did not end.');
}

describe('EventService', () => {
  it('lists what the services recorded, in order, as {id, type, timestamp, data}', async () => {
    const { core, clock } = setup();
    const agent = await core.agents.create(
      { workspaceId: 'ws1' },
      { name: 'Ada', description: 'helper', model: 'modelA-4' },
    );
    clock.advance(1_500);
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    const message = await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'assistant',
      content: 'Hi',
    });
    const page = await core.events.list({ workspaceId: 'ws1' });
    expect(page).toEqual({
      events: [
        { id: expect.stringMatching(/^evt_/), type: 'agent.created', timestamp: START, data: agent },
        {
          id: expect.stringMatching(/^evt_/),
          type: 'conversation.started',
          timestamp: '2026-01-01T00:00:01.500Z',
          data: conversation,
        },
        {
          id: expect.stringMatching(/^evt_/),
          type: 'message.received',
          timestamp: '2026-01-01T00:00:01.500Z',
          data: message,
        },
      ],
      hasMore: false,
    });
    expect(await core.events.get({ workspaceId: 'ws1' }, page.events[1]!.id)).toEqual(page.events[1]);
  });

  it('pages with an opaque nextCursor exactly when hasMore, and filters by type', async () => {
    const { core } = setup();
    const agents = [];
    for (let index = 0; index < 7; index += 1)
      agents.push(
        await core.agents.create({ workspaceId: 'ws1' }, { name: `A${index}`, description: '', model: 'modelA-4' }),
      );
    for (const agent of agents.slice(0, 3))
      await core.agents.update({ workspaceId: 'ws1' }, agent.id, { name: 'renamed' });
    const all = await walk(core, 100);
    expect(all.map((event) => event.type)).toEqual([
      ...Array(7).fill('agent.created'),
      ...Array(3).fill('agent.updated'),
    ]);
    expect(await walk(core, 3)).toEqual(all);
    expect(await walk(core, 1)).toEqual(all);
    expect(await walk(core, 2, 'agent.updated')).toEqual(all.slice(7));
    const first = await core.events.list({ workspaceId: 'ws1' }, { limit: 4 });
    expect(first.nextCursor).not.toContain(first.events[3]!.id);
    expect((await core.events.list({ workspaceId: 'ws1' }, { limit: '50', after: first.nextCursor })).events).toEqual(
      all.slice(4),
    );
    expect(await core.events.list({ workspaceId: 'ws1' }, { type: 'agent.deleted' })).toEqual({
      events: [],
      hasMore: false,
    });
  });

  it('defaults to 50 events; limit is 1–100', async () => {
    const { core } = setup();
    const agent = await core.agents.create({ workspaceId: 'ws1' }, { name: 'A', description: '', model: 'modelA-4' });
    for (let index = 0; index < 60; index += 1)
      await core.agents.update({ workspaceId: 'ws1' }, agent.id, { name: `n${index}` });
    const page = await core.events.list({ workspaceId: 'ws1' });
    expect(page.events).toHaveLength(50);
    expect(page.hasMore).toBe(true);
    for (const limit of [0, 101, -1, 1.5, 'ten', '']) {
      const error = await rejection(core.events.list({ workspaceId: 'ws1' }, { limit: limit as never }));
      expect(error.code).toBe('validation_failed');
      expect(issuePaths(error)).toEqual(['limit']);
    }
    expect(
      issuePaths(await rejection(core.events.list({ workspaceId: 'ws1' }, { type: 'agent.exploded' as never }))),
    ).toEqual(['type']);
    expect(issuePaths(await rejection(core.events.list({ workspaceId: 'ws1' }, { before: 'x' } as never)))).toEqual([
      'before',
    ]);
  });

  it('refuses garbage, forged and foreign cursors with invalid_request, and unknown ids with not_found', async () => {
    const { core } = setup();
    await core.agents.create({ workspaceId: 'ws1' }, { name: 'A', description: '', model: 'modelA-4' });
    await core.agents.create({ workspaceId: 'ws2' }, { name: 'B', description: '', model: 'modelA-4' });
    const [theirs] = (await core.events.list({ workspaceId: 'ws2' })).events;
    // Shaped exactly like a cursor Parley issues, but naming another workspace's event.
    const theirCursor = Buffer.from(`v1:events:${theirs!.id}`).toString('base64url');
    for (const after of [
      'garbage',
      Buffer.from('v1:events:evt_01JUNKJUNKJUNKJUNKJUNKJUNK').toString('base64url'),
      Buffer.from('v1:x:y').toString('base64url'),
      theirCursor,
    ]) {
      const error = await rejection(core.events.list({ workspaceId: 'ws1' }, { after }));
      expect(error.code, after).toBe('invalid_request');
    }
    expect((await rejection(core.events.get({ workspaceId: 'ws1' }, theirs!.id))).code).toBe('not_found');
    expect((await rejection(core.events.get({ workspaceId: 'ws1' }, 'evt_unknown'))).code).toBe('not_found');
    expect(await core.events.get({ workspaceId: 'ws2' }, theirs!.id)).toEqual(theirs);
  });

  it('hides events past the retention: not listed, not readable, and their cursors are refused', async () => {
    const { core, clock } = setup();
    await core.agents.create({ workspaceId: 'ws1' }, { name: 'Old', description: '', model: 'modelA-4' });
    const old = await core.events.list({ workspaceId: 'ws1' }, { limit: 1 });
    clock.advance(15 * DAY_MS);
    const fresh = await core.agents.create({ workspaceId: 'ws1' }, { name: 'New', description: '', model: 'modelA-4' });
    const page = await core.events.list({ workspaceId: 'ws1' });
    expect(page.events.map((event) => event.data)).toEqual([fresh]);
    expect((await rejection(core.events.get({ workspaceId: 'ws1' }, old.events[0]!.id))).code).toBe('not_found');
    const cursor = Buffer.from(`v1:events:${old.events[0]!.id}`).toString('base64url');
    expect((await rejection(core.events.list({ workspaceId: 'ws1' }, { after: cursor }))).code).toBe('invalid_request');
  });
});
