/** @module The response schemas describe what the services really return, field for field. */
import { memoryAdapters } from '@parley/adapter-memory';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { createCore, ParleyError } from '../index.js';
import {
  AgentListSchema,
  AgentSchema,
  ApiErrorSchema,
  ConversationListSchema,
  ConversationSchema,
  MessageHistorySchema,
  MessageSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from './responses.js';

/**
 * `value` satisfies `schema`, and the schema names every field: valibot's objects drop unknown
 * keys from their output, so a field missing from the documentation makes the output differ.
 */
function expectDocumented(schema: v.GenericSchema, value: unknown): void {
  const result = v.safeParse(schema, value);
  expect(result.issues?.map((issue) => `${v.getDotPath(issue)}: ${issue.message}`) ?? []).toEqual([]);
  expect(result.output).toEqual(value);
}

describe('response schemas', () => {
  it('describe agents, conversations, messages, history pages and lists as the services return them', async () => {
    const core = createCore(memoryAdapters());
    const agent = await core.agents.create(
      { workspaceId: 'ws1' },
      { name: 'Ada', description: 'helper', model: 'modelA-4', temperature: 0.3 },
    );
    expectDocumented(AgentSchema, agent);
    expectDocumented(
      AgentSchema,
      await core.agents.update({ workspaceId: 'ws1' }, agent.id, { configuration: { tone: 'warm' }, maxTokens: 10 }),
    );
    expectDocumented(AgentListSchema, await core.agents.list({ workspaceId: 'ws1' }));

    const conversation = await core.conversations.create({ workspaceId: 'ws1' }, { agentId: agent.id });
    expectDocumented(ConversationSchema, conversation);
    expectDocumented(
      ConversationSchema,
      await core.conversations.create(
        { workspaceId: 'ws1' },
        { agentId: agent.id, userId: 'u1', metadata: { a: [1] } },
      ),
    );
    expectDocumented(ConversationListSchema, await core.conversations.list({ workspaceId: 'ws1' }));

    for (const content of ['one', 'two', 'three']) {
      expectDocumented(
        MessageSchema,
        await core.conversations.sendMessage({ workspaceId: 'ws1' }, conversation.id, { role: 'user', content }),
      );
    }
    const page = await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { limit: 2 });
    expect(page.nextCursor).toBeDefined();
    expectDocumented(MessageHistorySchema, page);
    expectDocumented(
      MessageHistorySchema,
      await core.conversations.history({ workspaceId: 'ws1' }, conversation.id, { before: page.nextCursor }),
    );
    expectDocumented(
      ConversationSchema,
      await core.conversations.update({ workspaceId: 'ws1' }, conversation.id, { status: 'completed' }),
    );
  });

  it('describe webhook endpoints, with the generated secret only at registration', async () => {
    const core = createCore(memoryAdapters());
    const registration = { url: 'https://example.com/hooks', events: ['agent.created' as const] };
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, registration);
    expect(created.secret).toMatch(/^whsec_/);
    expectDocumented(WebhookEndpointCreatedSchema, created);
    expectDocumented(WebhookEndpointSchema, await core.webhooks.get({ workspaceId: 'ws1' }, created.id));
    expectDocumented(WebhookEndpointListSchema, await core.webhooks.list({ workspaceId: 'ws1' }));
  });

  it('describe the error body', async () => {
    const core = createCore(memoryAdapters());
    const error: unknown = await core.agents.create({ workspaceId: 'ws1' }, { name: '' } as never).then(
      () => new Error('Expected a validation failure.'),
      (caught: unknown) => caught,
    );
    if (!(error instanceof ParleyError)) throw error;
    expectDocumented(ApiErrorSchema, { error: { code: error.code, message: error.message, details: error.details } });
  });

  it('notice an undocumented field and a wrong type', () => {
    const agent = {
      id: 'agt_1',
      name: 'A',
      description: '',
      model: 'modelA-4',
      systemPrompt: null,
      temperature: null,
      maxTokens: null,
    };
    const full = {
      ...agent,
      configuration: {},
      tools: [],
      maxSteps: 8,
      autoReply: true,
      mcpServers: [],
      status: 'active',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(() => expectDocumented(AgentSchema, full)).not.toThrow();
    expect(() => expectDocumented(AgentSchema, { ...full, secret: 'x' })).toThrow();
    expect(() => expectDocumented(AgentSchema, { ...full, createdAt: 'yesterday' })).toThrow();
    expect(() => expectDocumented(AgentSchema, { ...full, id: 'conv_1' })).toThrow();
  });
});
