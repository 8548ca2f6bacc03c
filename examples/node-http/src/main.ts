/**
 * @module Example (c): Parley served by a plain `node:http` server, next to the host's own
 * routes, through @hono/node-server's `getRequestListener` (Express: `app.use(listener)` works
 * the same way).
 * Run it: `npm run build && npm start -w @parley-examples/node-http`.
 */
import { getRequestListener } from '@hono/node-server';
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import { createApp, createLogger } from '@parley/http';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';

/** A Node server answering `/` itself and handing every other request to Parley. */
export function createHostServer(core: Core): Server {
  const parley = getRequestListener(createApp(core, { logLevel: 'warn' }).fetch);
  return createServer((request, response) => {
    if (request.url === '/') {
      response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('My product');
      return;
    }
    void parley(request, response);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const core = createCore(memoryAdapters(), {
    logger: createLogger('warn'), // where the workers report failed deliveries and replies
    // Webhooks to loopback or private addresses (a receiver on your machine) only when allowed, as in `parley serve`.
    allowPrivateWebhookUrls: process.env.WEBHOOK_ALLOW_PRIVATE_URLS === 'true',
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const port = Number(process.env.PORT ?? 3000);
  const server = createHostServer(core).listen(port, '127.0.0.1', () => {
    console.log(`curl -H "Authorization: Bearer ${key}" http://127.0.0.1:${port}/api/agents`);
  });
  // The outbox relay, webhook delivery and agent replies run in this process: without this call a
  // registered webhook is never delivered and agents never reply.
  core.workers.start();
  // SIGTERM (a container stop) or Ctrl-C: stop accepting, let in-flight requests finish, then the
  // deliveries and replies in hand, and exit 0.
  const stop = () => {
    server.close(() => void core.workers.stop().then(() => process.exit(0)));
    server.closeIdleConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
