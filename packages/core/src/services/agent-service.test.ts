/** @module AgentService on the memory adapters: records, paging, updates, the delete cascade and events. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, type AgentCreateInput } from '../index.js';
import { issuePaths, MARK, rejection, sized } from '../test-support/errors.js';
import { ManualClock } from '../testing/clock.js';
import { scriptedModel } from '../testing/index.js';
import { recordedEvents } from '../test-support/events.js';

const START = '2026-01-01T00:00:00.000Z';
const base: AgentCreateInput = { name: 'Ada', description: 'helper', model: 'modelA-4' };

function setup() {
  const adapters = memoryAdapters();
  const clock = new ManualClock(Date.parse(START));
  const core = createCore(adapters, { clock });
  return {
    core,
    clock,
    events: async () =>
      (await recordedEvents(adapters.storage)).map((event) => ({
        type: event.type,
        id: (event.data as { id: string }).id,
      })),
  };
}

describe('AgentService', () => {
  it('creates an active agent with nulls for unset optional fields and emits agent.created with it', async () => {
    const adapters = memoryAdapters();
    const core = createCore(adapters, { clock: new ManualClock(Date.parse(START)) });
    const agent = await core.agents.create({ workspaceId: 'ws1' }, base);
    expect(agent).toEqual({
      id: agent.id,
      name: 'Ada',
      description: 'helper',
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
      createdAt: START,
      updatedAt: START,
    });
    expect(agent.id).toMatch(/^agt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(await core.agents.get({ workspaceId: 'ws1' }, agent.id)).toEqual(agent);
    const events = await recordedEvents(adapters.storage);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({
      id: events[0]!.id,
      type: 'agent.created',
      workspaceId: 'ws1',
      occurredAt: START,
      data: agent,
    });
    expect(events[0]!.id).toMatch(/^evt_/);
  });

  it('an unknown model names every allowed model and MODELS, without echoing the input', async () => {
    const { core } = setup();
    const error = await rejection(core.agents.create({ workspaceId: 'ws1' }, { ...base, model: `gpt-${MARK}` }));
    expect(error.code).toBe('validation_failed');
    expect(error.details?.['issues']).toEqual([
      {
        path: 'model',
        message:
          "Expected one of modelA-4, modelA-3.5-turbo, modelB-3 (the spec's three; none is configured in MODELS).",
      },
    ]);
    const withModels = createCore(memoryAdapters(), { models: { llama: scriptedModel([{ deltas: ['hi'] }]) } });
    const patched = await rejection(withModels.agents.create({ workspaceId: 'ws1' }, { ...base, model: 'lama' }));
    expect(patched.details?.['issues']).toEqual([
      {
        path: 'model',
        message:
          "Expected one of modelA-4, modelA-3.5-turbo, modelB-3, llama (the spec's three and llama from MODELS).",
      },
    ]);
    expect(JSON.stringify(error)).not.toContain(MARK);
  });

  it('stores every optional field given on creation', async () => {
    const { core } = setup();
    const input: AgentCreateInput = {
      ...base,
      model: 'modelB-3',
      systemPrompt: 'Be brief.',
      temperature: 0,
      maxTokens: 1_000_000,
      configuration: { skills: ['search'] },
    };
    const agent = await core.agents.create({ workspaceId: 'ws1' }, input);
    expect(agent).toMatchObject({
      model: 'modelB-3',
      systemPrompt: 'Be brief.',
      temperature: 0,
      maxTokens: 1_000_000,
      configuration: { skills: ['search'] },
    });
    expect(await core.agents.get({ workspaceId: 'ws1' }, agent.id)).toEqual(agent);
  });

  it('answers not_found for an unknown id and for an agent of another workspace', async () => {
    const { core } = setup();
    const agent = await core.agents.create({ workspaceId: 'ws1' }, base);
    for (const [workspaceId, id] of [
      ['ws1', 'agt_unknown'],
      ['ws2', agent.id],
    ] as const) {
      const workspace = { workspaceId };
      expect((await rejection(core.agents.get(workspace, id))).code).toBe('not_found');
      expect((await rejection(core.agents.update(workspace, id, { name: 'x' }))).code).toBe('not_found');
      expect((await rejection(core.agents.delete(workspace, id))).code).toBe('not_found');
    }
    expect(await core.agents.get({ workspaceId: 'ws1' }, agent.id)).toEqual(agent);
  });

  it('lists newest first with page, limit (numbers or digit strings) and status; echoes page and limit', async () => {
    const { core, clock } = setup();
    const made = [];
    for (let index = 0; index < 5; index += 1) {
      clock.advance(1000);
      made.unshift(await core.agents.create({ workspaceId: 'ws1' }, { ...base, name: `Agent ${index}` }));
    }
    await core.agents.update({ workspaceId: 'ws1' }, made[1]!.id, { status: 'inactive' });
    await core.agents.create({ workspaceId: 'ws2' }, base);
    const ids = (list: { agents: Array<{ id: string }> }) => list.agents.map((agent) => agent.id);

    const all = await core.agents.list({ workspaceId: 'ws1' });
    expect({ ...all, agents: ids(all) }).toEqual({
      agents: made.map((agent) => agent.id),
      total: 5,
      page: 1,
      limit: 20,
    });
    const second = await core.agents.list({ workspaceId: 'ws1' }, { page: '2', limit: '2' });
    expect({ ...second, agents: ids(second) }).toEqual({
      agents: [made[2]!.id, made[3]!.id],
      total: 5,
      page: 2,
      limit: 2,
    });
    const beyond = await core.agents.list({ workspaceId: 'ws1' }, { page: 4, limit: 2 });
    expect(beyond).toEqual({ agents: [], total: 5, page: 4, limit: 2 });
    const inactive = await core.agents.list({ workspaceId: 'ws1' }, { status: 'inactive' });
    expect({ ...inactive, agents: ids(inactive) }).toEqual({ agents: [made[1]!.id], total: 1, page: 1, limit: 20 });
    expect((await core.agents.list({ workspaceId: 'ws1' }, { status: 'active', limit: 100 })).total).toBe(4);
  });

  it('refuses list queries out of range, of the wrong form or with unknown fields', async () => {
    const { core } = setup();
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ page: 0 }, 'page'],
      [{ page: '0' }, 'page'],
      [{ page: -1 }, 'page'],
      [{ page: '-1' }, 'page'],
      [{ page: 1.5 }, 'page'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: '101' }, 'limit'],
      [{ limit: '1.5' }, 'limit'],
      [{ limit: '1e1' }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ limit: '' }, 'limit'],
      [{ limit: ' 5' }, 'limit'],
      [{ status: 'deleted' }, 'status'],
      [{ sort: 'name' }, 'sort'],
    ];
    for (const [query, path] of bad) {
      const error = await rejection(core.agents.list({ workspaceId: 'ws1' }, query as never));
      expect(error.code, JSON.stringify(query)).toBe('validation_failed');
      expect(error.details, JSON.stringify(query)).toEqual({ issues: [{ path, message: expect.any(String) }] });
    }
    expect((await core.agents.list({ workspaceId: 'ws1' }, { page: 1, limit: 100 })).limit).toBe(100);
    expect((await core.agents.list({ workspaceId: 'ws1' }, { limit: '1' })).limit).toBe(1);
  });

  it('updates the given fields, keeps createdAt, bumps updatedAt and emits agent.updated with the new agent', async () => {
    const { core, clock, events } = setup();
    const created = await core.agents.create(
      { workspaceId: 'ws1' },
      { ...base, systemPrompt: 'old', temperature: 1, configuration: { a: 1, b: 2 } },
    );
    clock.advance(60_000);
    const updated = await core.agents.update({ workspaceId: 'ws1' }, created.id, {
      name: 'Grace',
      model: 'modelA-3.5-turbo',
      systemPrompt: null,
      maxTokens: 100,
      configuration: { c: 3 },
      status: 'inactive',
    });
    expect(updated).toEqual({
      ...created,
      name: 'Grace',
      model: 'modelA-3.5-turbo',
      systemPrompt: null,
      maxTokens: 100,
      configuration: { c: 3 },
      status: 'inactive',
      updatedAt: '2026-01-01T00:01:00.000Z',
    });
    expect(await core.agents.get({ workspaceId: 'ws1' }, created.id)).toEqual(updated);
    expect(await events()).toEqual([
      { type: 'agent.created', id: created.id },
      { type: 'agent.updated', id: created.id },
    ]);
  });

  it('treats an empty patch as a no-op: same agent, no new updatedAt, no event', async () => {
    const { core, clock, events } = setup();
    const created = await core.agents.create({ workspaceId: 'ws1' }, base);
    clock.advance(5_000);
    expect(await core.agents.update({ workspaceId: 'ws1' }, created.id, {})).toEqual(created);
    expect(await core.agents.get({ workspaceId: 'ws1' }, created.id)).toEqual(created);
    expect(await events()).toEqual([{ type: 'agent.created', id: created.id }]);
  });

  it('applies concurrent PATCHes of different fields all, each recorded with its own agent.updated', async () => {
    const { core, events } = setup();
    const created = await core.agents.create({ workspaceId: 'ws1' }, base);
    await Promise.all([
      core.agents.update({ workspaceId: 'ws1' }, created.id, { name: 'Renamed' }),
      core.agents.update({ workspaceId: 'ws1' }, created.id, { status: 'inactive' }),
      core.agents.update({ workspaceId: 'ws1' }, created.id, { temperature: 0.2 }),
      core.agents.update({ workspaceId: 'ws1' }, created.id, { configuration: { tone: 'dry' } }),
    ]);
    const stored = await core.agents.get({ workspaceId: 'ws1' }, created.id);
    expect(stored).toMatchObject({
      name: 'Renamed',
      status: 'inactive',
      temperature: 0.2,
      configuration: { tone: 'dry' },
    });
    expect((await events()).map((event) => event.type)).toEqual(['agent.created', ...Array(4).fill('agent.updated')]);
  });

  it('treats fields given as undefined as absent rather than erasing them', async () => {
    const { core, events } = setup();
    const created = await core.agents.create({ workspaceId: 'ws1' }, { ...base, systemPrompt: 'kept' });
    const result = await core.agents.update({ workspaceId: 'ws1' }, created.id, {
      name: undefined,
      systemPrompt: undefined,
      status: undefined,
    });
    expect(result).toEqual(created);
    expect(await core.agents.get({ workspaceId: 'ws1' }, created.id)).toEqual(created);
    expect((await events()).map((event) => event.type)).toEqual(['agent.created']);
  });

  it('deletes the agent with its conversations and messages, emitting only agent.deleted', async () => {
    const { core, events } = setup();
    const agent = await core.agents.create({ workspaceId: 'ws1' }, base);
    const other = await core.agents.create({ workspaceId: 'ws1' }, { ...base, name: 'Other' });
    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content: 'hi' });
    await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, {
      role: 'assistant',
      content: 'hello',
    });
    const kept = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: other.id });
    const before = (await events()).length;

    expect(await core.agents.delete({ workspaceId: 'ws1' }, agent.id)).toEqual(agent);
    expect((await events()).slice(before)).toEqual([{ type: 'agent.deleted', id: agent.id }]);
    expect((await rejection(core.agents.get({ workspaceId: 'ws1' }, agent.id))).code).toBe('not_found');
    expect((await rejection(core.conversations.get({ workspaceId: 'ws1' }, conversation.id))).code).toBe('not_found');
    expect((await rejection(core.conversations.history({ workspaceId: 'ws1' }, conversation.id))).code).toBe(
      'not_found',
    );
    expect((await rejection(core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id }))).code).toBe(
      'not_found',
    );
    expect(await core.conversations.list({ workspaceId: 'ws1' })).toEqual({
      conversations: [kept],
      total: 1,
      page: 1,
      limit: 20,
    });
    expect((await rejection(core.agents.delete({ workspaceId: 'ws1' }, agent.id))).code).toBe('not_found');
  });
});

/** `levels` nested objects, the innermost holding `leaf`. */
function nest(levels: number, leaf: unknown = 1): Record<string, unknown> {
  let value: unknown = leaf;
  for (let level = 0; level < levels; level += 1) value = { a: value };
  return value as Record<string, unknown>;
}

describe('AgentService validation (docs/api.md#resources)', () => {
  const accepted: Array<[string, Record<string, unknown>]> = [
    ['name of 1 character', { name: 'A' }],
    ['name of 256 characters', { name: 'n'.repeat(256) }],
    ['empty description', { description: '' }],
    ['description of 1024 characters', { description: 'd'.repeat(1024) }],
    ['systemPrompt of 32768 characters', { systemPrompt: 's'.repeat(32_768) }],
    ['temperature 0 and 2', { temperature: 2 }],
    ['maxTokens 1', { maxTokens: 1 }],
    ['maxTokens 1000000', { maxTokens: 1_000_000 }],
    ['configuration of 16 KiB serialized', { configuration: { k: 'x'.repeat(16 * 1024 - 8) } }],
    ['configuration nested 8 levels', { configuration: nest(8) }],
    ['configuration with arrays up to 8 levels', { configuration: { a: [[[[[[[1]]]]]]] } }],
  ];
  for (const [label, fields] of accepted) {
    it(`accepts ${label}`, async () => {
      const { core } = setup();
      const agent = await core.agents.create({ workspaceId: 'ws1' }, { ...base, ...fields } as AgentCreateInput);
      expect(agent).toMatchObject(fields);
    });
  }

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['a missing name', { name: undefined }, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a name of 257 characters', { name: sized(257) }, 'name'],
    ['a name that is not a string', { name: 42 }, 'name'],
    ['a missing description', { description: undefined }, 'description'],
    ['a description of 1025 characters', { description: sized(1025) }, 'description'],
    ['an unknown model', { model: MARK }, 'model'],
    ['a systemPrompt of 32769 characters', { systemPrompt: sized(32_769) }, 'systemPrompt'],
    ['a temperature below 0', { temperature: -0.01 }, 'temperature'],
    ['a temperature above 2', { temperature: 2.01 }, 'temperature'],
    ['a temperature given as a string', { temperature: MARK }, 'temperature'],
    ['maxTokens 0', { maxTokens: 0 }, 'maxTokens'],
    ['maxTokens above 1000000', { maxTokens: 1_000_001 }, 'maxTokens'],
    ['maxTokens that is not an integer', { maxTokens: 10.5 }, 'maxTokens'],
    ['a configuration that is an array', { configuration: [MARK] }, 'configuration'],
    ['a configuration that is a string', { configuration: MARK }, 'configuration'],
    ['a configuration that is null', { configuration: null }, 'configuration'],
    ['a configuration of 16 KiB + 1 byte serialized', { configuration: { k: sized(16 * 1024 - 7) } }, 'configuration'],
    [
      'a configuration of 16 KiB + 1 byte in UTF-8, far fewer characters',
      { configuration: { k: `${'é'.repeat(8188)}x` } },
      'configuration',
    ],
    ['a configuration nested 9 levels', { configuration: nest(9, MARK) }, 'configuration'],
    ['a configuration nested 9 levels through arrays', { configuration: { a: [[[[[[[[MARK]]]]]]]] } }, 'configuration'],
    [
      'a configuration nested 100000 levels',
      { configuration: JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) },
      'configuration',
    ],
    [
      'a configuration with a __proto__ key',
      { configuration: JSON.parse(`{"__proto__": {"x": "${MARK}"}}`) },
      'configuration',
    ],
    ['a configuration with a nested constructor key', { configuration: { a: { constructor: MARK } } }, 'configuration'],
    [
      'a configuration with a prototype key inside an array',
      { configuration: { a: [{ prototype: MARK }] } },
      'configuration',
    ],
    ['an unknown field', { colour: MARK }, 'colour'],
  ];
  for (const [label, fields, path] of refused) {
    it(`refuses ${label} with validation_failed at '${path}', without echoing it`, async () => {
      const { core, events } = setup();
      const error = await rejection(
        core.agents.create({ workspaceId: 'ws1' }, { ...base, ...fields } as AgentCreateInput),
      );
      expect(error.code).toBe('validation_failed');
      expect(issuePaths(error)).toEqual([path]);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(MARK);
      expect(await core.agents.list({ workspaceId: 'ws1' })).toMatchObject({ total: 0 });
      expect(await events()).toEqual([]);
    });
  }

  it('refuses a missing or non-object body with validation_failed at path body', async () => {
    const { core } = setup();
    const agent = await core.agents.create({ workspaceId: 'ws1' }, base);
    for (const body of [undefined, null, MARK, [base], 42]) {
      for (const call of [
        () => core.agents.create({ workspaceId: 'ws1' }, body as never),
        () => core.agents.update({ workspaceId: 'ws1' }, agent.id, body as never),
      ]) {
        const error = await rejection(call());
        expect([error.code, issuePaths(error)], JSON.stringify(body)).toEqual(['validation_failed', ['body']]);
        expect(JSON.stringify(error.details)).not.toContain(MARK);
      }
    }
  });

  it('validates updates with the same limits and changes nothing on failure', async () => {
    const { core, events } = setup();
    const agent = await core.agents.create({ workspaceId: 'ws1' }, base);
    const patches: Array<[Record<string, unknown>, string]> = [
      [{ name: '' }, 'name'],
      [{ name: sized(257) }, 'name'],
      [{ description: 'd'.repeat(1025) }, 'description'],
      [{ model: MARK }, 'model'],
      [{ temperature: 3 }, 'temperature'],
      [{ maxTokens: 0.5 }, 'maxTokens'],
      [{ configuration: JSON.parse('{"a": {"__proto__": 1}}') }, 'configuration'],
      [{ status: MARK }, 'status'],
      [{ id: 'agt_other' }, 'id'],
      [{ createdAt: MARK }, 'createdAt'],
    ];
    for (const [patch, path] of patches) {
      const error = await rejection(core.agents.update({ workspaceId: 'ws1' }, agent.id, patch as never));
      expect(error.code, path).toBe('validation_failed');
      expect(issuePaths(error), path).toEqual([path]);
      expect(JSON.stringify(error.details)).not.toContain(MARK);
    }
    expect((await rejection(core.agents.update({ workspaceId: 'ws1' }, 'agt_unknown', { name: '' }))).code).toBe(
      'validation_failed',
    );
    expect(await core.agents.get({ workspaceId: 'ws1' }, agent.id)).toEqual(agent);
    expect((await events()).map((event) => event.type)).toEqual(['agent.created']);
  });
});
