/**
 * @module Example (e): a `useChat` page talking to Parley. Parley runs in this process (memory),
 * with one agent replying through an OpenAI-compatible server — Ollama on this machine unless
 * `MODEL_BASE_URL` (and `MODEL_API_KEY`, `MODEL_NAME`) say otherwise.
 * Run it: `npm run build && npm start -w @parley-examples/use-chat`, then open the printed URL.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { createLogger } from '@parley/http';
import { serve } from '@parley/http/server';
import { fileURLToPath } from 'node:url';
import { createChatServer } from './server.js';

const provider = createOpenAICompatible({
  name: 'chat-example',
  baseURL: process.env.MODEL_BASE_URL ?? 'http://127.0.0.1:11434/v1',
  ...(process.env.MODEL_API_KEY && { apiKey: process.env.MODEL_API_KEY }),
  includeUsage: true,
});
const core = createCore(memoryAdapters(), {
  logger: createLogger('warn'),
  models: { assistant: provider.chatModel(process.env.MODEL_NAME ?? 'llama3.2') },
});
const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
const agent = await core.agents.create(
  { workspaceId: 'demo' },
  { name: 'Helper', description: 'Answers briefly', model: 'assistant', systemPrompt: 'Answer in two sentences.' },
);
const server = await serve(
  createChatServer({ core, key, agentId: agent.id, pageDir: fileURLToPath(new URL('../dist', import.meta.url)) }),
  { port: Number(process.env.PORT ?? 3000) },
);
// Agent replies are made by the workers of this process.
core.workers.start();

// Listened for before the line below says the server is up, so a stop sent on seeing it is handled.
const stop = () => void server.close().then(() => core.workers.stop().then(() => process.exit(0)));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
console.log(`Chat with the agent at ${server.url}/`);
