/**
 * @module Example (e): a host app built on whatever adapters it is given, so production passes
 * Redis ones (`server.ts`) and tests pass memory ones (`app.test.ts`).
 */
import { createCore, type Adapters, type CoreSettings } from '@parley/core';
import { createApp, createLogger, toErrorResponse, type Logger } from '@parley/http';
import { Hono } from 'hono';

/** The workspace this product keeps its support conversations in. */
export const WORKSPACE = 'support';

/**
 * A support desk: `POST /tickets {agentId, customer, question}` opens a conversation with the
 * question as its first message; Parley's API is mounted under `/parley` for the agents' side.
 * The desk's own routes render errors as Parley does (`toErrorResponse`), so an unknown agent is
 * `404 {"error": {"code": "not_found", …}}`, a bad question `400 validation_failed` and a
 * malformed body `400 invalid_request`, not a bare 500 with a stack trace on stderr.
 * `options.settings` go to `createCore` (`allowPrivateWebhookUrls`, `models`, …); the workers
 * report to the desk's logger. Nothing here starts the workers: whoever runs the desk calls
 * `core.workers.start()` (`server.ts`, or a test that wants deliveries or replies).
 */
export function createSupportDesk(adapters: Adapters, options: { logger?: Logger; settings?: CoreSettings } = {}) {
  const logger = options.logger ?? createLogger('warn');
  const core = createCore(adapters, { logger, ...options.settings });
  const app = new Hono();
  app.onError((error, c) => toErrorResponse(error, c, { logger }));
  app.post('/tickets', async (c) => {
    const { agentId, customer, question } = await c.req.json<{ agentId: string; customer: string; question: string }>();
    const conversation = await core.conversations.create({ workspaceId: WORKSPACE }, { agentId, userId: customer });
    await core.conversations.sendMessage({ workspaceId: WORKSPACE }, conversation.id, {
      role: 'user',
      content: question,
    });
    return c.json({ ticket: conversation.id }, 201);
  });
  app.route('/parley', createApp(core, { logger }));
  return { app, core };
}
