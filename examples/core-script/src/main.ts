/**
 * @module Example (d): Parley's domain in a script, without HTTP: agents, a conversation, its
 * messages and history, and the errors core throws.
 * Run it: `npm run build && npm start -w @parley-examples/core-script`.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, isParleyError } from '@parley/core';
import { fileURLToPath } from 'node:url';

/** Runs the walkthrough, telling `log` what happens. */
export async function main(log: (line: string) => void = console.log): Promise<void> {
  const core = createCore(memoryAdapters());
  // Every method takes the workspace id: workspaces never see each other's records.
  const agent = await core.agents.create(
    { workspaceId: 'acme' },
    { name: 'Billing helper', description: 'Answers billing questions', model: 'modelA-4' },
  );
  const conversation = await core.conversations.create(
    { workspaceId: 'acme' },
    { agentId: agent.id, userId: 'user_42' },
  );
  await core.conversations.sendMessage({ workspaceId: 'acme' }, conversation.id, {
    role: 'user',
    content: 'I was charged twice.',
  });
  await core.conversations.sendMessage({ workspaceId: 'acme' }, conversation.id, {
    role: 'assistant',
    content: 'Which invoice?',
  });
  const { messages, hasMore } = await core.conversations.history({ workspaceId: 'acme' }, conversation.id, {
    limit: 20,
  });
  log(
    `${agent.name}: ${messages.map((message) => `${message.role}: ${message.content}`).join(' | ')} (more: ${hasMore})`,
  );

  try {
    await core.agents.create({ workspaceId: 'acme' }, { name: '', description: '', model: 'modelA-4' });
  } catch (error) {
    // Inputs are validated by the same valibot schemas the HTTP API and its OpenAPI document use.
    if (isParleyError(error, 'validation_failed')) log(`refused: ${error.message}`);
  }
  try {
    await core.agents.get({ workspaceId: 'another-workspace' }, agent.id);
  } catch (error) {
    if (isParleyError(error, 'not_found')) log('another workspace sees nothing');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
