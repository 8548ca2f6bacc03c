/** @module `createCore`'s `register` hook: a host replaces a port or a service before they are built. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { AgentService, TOKENS, createCore, type Agent, type AgentCreateInput } from './index.js';
import { ManualClock } from './testing/clock.js';

const INPUT: AgentCreateInput = { name: 'Ada', description: 'Billing', model: 'modelA-4' };

/** A service a host might register instead of Parley's: every new agent gets a default system prompt. */
class HouseStyleAgentService extends AgentService {
  override async create(workspaceId: string, input: AgentCreateInput): Promise<Agent> {
    return super.create(workspaceId, { systemPrompt: 'Answer in one sentence.', ...input });
  }
}

describe('createCore({ register })', () => {
  it('replaces a port: every service, core.clock and the default id generator use the registered clock', async () => {
    const clock = new ManualClock(Date.parse('2030-05-06T07:08:09.010Z'));
    const core = createCore({ ...memoryAdapters(), register: (container) => container.register(TOKENS.clock, { useValue: clock }) });
    expect(core.clock).toBe(clock);
    const agent = await core.agents.create('ws', INPUT);
    expect(agent.createdAt).toBe('2030-05-06T07:08:09.010Z');
    // A ULID's first 10 characters are its millisecond timestamp (Crockford base32).
    expect(agent.id.slice('agt_'.length, 'agt_'.length + 10)).toBe(ulidTime(clock.now()));
    const conversation = await core.conversations.create('ws', { agentId: agent.id });
    expect(conversation.createdAt).toBe('2030-05-06T07:08:09.010Z');
    // The container is the core's own: another core keeps the system clock.
    expect((await createCore(memoryAdapters()).agents.create('ws', INPUT)).createdAt).not.toBe(agent.createdAt);
  });

  it('replaces a service: the subclass is built from the core\'s ports and is what core.agents is', async () => {
    const core = createCore({
      ...memoryAdapters(),
      register: (container) =>
        container.register(AgentService, {
          useFactory: (c) => new HouseStyleAgentService(c.resolve(TOKENS.storage), c.resolve(TOKENS.clock), c.resolve(TOKENS.ids)),
        }),
    });
    expect(core.agents).toBeInstanceOf(HouseStyleAgentService);
    const agent = await core.agents.create('ws', INPUT);
    expect((await core.agents.get('ws', agent.id)).systemPrompt).toBe('Answer in one sentence.');
    // The conversation service reads the same storage the replacement wrote to.
    expect((await core.conversations.create('ws', { agentId: agent.id })).agentId).toBe(agent.id);
  });

  it('builds the rate limiter when a host registers a rate-limit store, and none without', () => {
    const { rateLimits, ...withoutLimits } = memoryAdapters();
    expect(createCore(withoutLimits).rateLimiter).toBeUndefined();
    const core = createCore({ ...withoutLimits, register: (container) => container.register(TOKENS.rateLimits, { useValue: rateLimits }) });
    expect(core.rateLimiter).toBeDefined();
  });
});

/** The 10-character Crockford base32 time part of a ULID for `ms`. */
function ulidTime(ms: number): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let out = '';
  for (let i = 0; i < 10; i += 1) {
    out = alphabet[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}
