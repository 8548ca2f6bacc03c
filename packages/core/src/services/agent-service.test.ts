import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, isParleyError } from '../index.js';

describe('AgentService', () => {
  it('creates an active agent with nulls for unset optional fields and emits agent.created', async () => {
    const adapters = memoryAdapters();
    const core = createCore(adapters);
    const agent = await core.agents.create('ws1', { name: 'Ada', description: 'helper', model: 'modelA-4' });
    expect(agent).toMatchObject({ name: 'Ada', status: 'active', systemPrompt: null, temperature: null, maxTokens: null, configuration: {} });
    expect(agent.id).toMatch(/^agt_[0-9A-Z]{26}$/);
    expect(adapters.events.events().map((event) => [event.type, event.data.id])).toEqual([['agent.created', agent.id]]);
    await expect(core.agents.get('ws2', agent.id)).rejects.toSatisfy((error) => isParleyError(error, 'not_found'));
  });
});
