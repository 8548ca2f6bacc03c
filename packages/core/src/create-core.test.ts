/** @module `createCore`: settings, replacing a service (`register`) and replacing a port (the bundle). */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { inject, injectable } from './di.js';
import { AgentService, TOKENS, createCore, type Adapters, type Agent, type AgentCreateInput, type Clock, type IdGenerator, type Storage } from './index.js';
import { ManualClock } from './testing/clock.js';

const INPUT: AgentCreateInput = { name: 'Ada', description: 'Billing', model: 'modelA-4' };

/**
 * A service a host might register instead of Parley's: every new agent gets a default system
 * prompt. tsyringe does not inherit a base class's `@inject` tokens, so the subclass names them.
 */
@injectable()
class HouseStyleAgentService extends AgentService {
  constructor(@inject(TOKENS.storage) storage: Storage, @inject(TOKENS.clock) clock: Clock, @inject(TOKENS.ids) ids: IdGenerator) {
    super(storage, clock, ids);
  }

  override async create(workspaceId: string, input: AgentCreateInput): Promise<Agent> {
    return super.create(workspaceId, { systemPrompt: 'Answer in one sentence.', ...input });
  }
}

describe('createCore(adapters, settings)', () => {
  it('takes its clock from the settings: every service, core.clock and the default id generator use it', async () => {
    const clock = new ManualClock(Date.parse('2030-05-06T07:08:09.010Z'));
    const core = createCore(memoryAdapters(), { clock });
    expect(core.clock).toBe(clock);
    const agent = await core.agents.create('ws', INPUT);
    expect(agent.createdAt).toBe('2030-05-06T07:08:09.010Z');
    // A ULID's first 10 characters are its millisecond timestamp (Crockford base32).
    expect(agent.id.slice('agt_'.length, 'agt_'.length + 10)).toBe(ulidTime(clock.now()));
    const conversation = await core.conversations.create('ws', { agentId: agent.id });
    expect(conversation.createdAt).toBe('2030-05-06T07:08:09.010Z');
    // Each core has its own container: another core keeps the system clock.
    expect((await createCore(memoryAdapters()).agents.create('ws', INPUT)).createdAt).not.toBe(agent.createdAt);
  });

  it('replaces a service: `register` installs the subclass, built from the core\'s ports, and it is what core.agents is', async () => {
    // docs/architecture.md "Replacing a service" copies this call.
    const core = createCore(memoryAdapters(), {
      register: (container) => container.register(AgentService, { useClass: HouseStyleAgentService }),
    });
    expect(core.agents).toBeInstanceOf(HouseStyleAgentService);
    const agent = await core.agents.create('ws', INPUT);
    expect((await core.agents.get('ws', agent.id)).systemPrompt).toBe('Answer in one sentence.');
    // The conversation service reads the same storage the replacement wrote to.
    expect((await core.conversations.create('ws', { agentId: agent.id })).agentId).toBe(agent.id);
  });

  it('replaces a port by replacing a member of the bundle: the services and workers use the replacement', async () => {
    const memory = memoryAdapters();
    const keys: string[] = [];
    const counted: Adapters = {
      ...memory,
      rateLimits: { hit: (key, rule, now) => (keys.push(key), memory.rateLimits.hit(key, rule, now)) },
    };
    const core = createCore(counted);
    const { record } = await core.apiKeys.issue({ workspaceId: 'ws', plan: 'free' });
    expect((await core.rateLimiter.check({ keyId: record.keyId, workspaceId: 'ws', plan: 'free', scopes: ['*'] })).allowed).toBe(true);
    expect(keys).toHaveLength(1);
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
