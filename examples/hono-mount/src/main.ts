/**
 * @module Example (b): Parley's API inside an existing Hono app, under `/agents-api`.
 *
 * `createApp(core)` serves `/api/...`, `/sandbox/...`, `/healthz`, `/readyz`, `/openapi.json`
 * and `/docs` at its own root. `host.route('/agents-api', app)` puts all of them under the
 * prefix: `/agents-api/api/agents`, `/agents-api/docs`, … Parley's request-id and logging
 * middleware then apply to `/agents-api/*` only, the document names `/agents-api` in `servers`,
 * and a client takes `${origin}/agents-api` as its base URL.
 * Run it: `npm run build && npm start -w @parley-examples/hono-mount`.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Core } from '@parley/core';
import { createApp, createLogger } from '@parley/http';
import { serve } from '@parley/http/server';
import { Hono } from 'hono';
import { fileURLToPath } from 'node:url';

/** The product's own app, with Parley mounted under `/agents-api`. */
export function createHostApp(core: Core): Hono {
  const host = new Hono();
  host.get('/', (c) => c.text('My product'));
  host.route('/agents-api', createApp(core, { logLevel: 'warn' }));
  return host;
}

/** A running host: where it listens, and how to stop it. */
export interface RunningHost {
  url: string;
  /** Drains in-flight requests, then lets the workers finish the deliveries and replies in hand. */
  close(): Promise<void>;
}

/**
 * Serves {@link createHostApp} on `port` and starts Parley's workers in this process: the outbox
 * relay, webhook delivery and agent replies. Without `core.workers.start()` a registered webhook
 * is never delivered and agents never reply.
 */
export async function startHost(core: Core, port: number): Promise<RunningHost> {
  const server = await serve(createHostApp(core), { port });
  core.workers.start();
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await core.workers.stop();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const core = createCore(memoryAdapters(), {
    logger: createLogger('warn'), // where the workers report failed deliveries and replies
    // Webhooks to loopback or private addresses (a receiver on your machine) only when allowed, as in `parley serve`.
    allowPrivateWebhookUrls: process.env.WEBHOOK_ALLOW_PRIVATE_URLS === 'true',
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const host = await startHost(core, Number(process.env.PORT ?? 3000));
  // SIGTERM (a container stop) or Ctrl-C: drain in-flight requests and deliveries, then exit 0.
  // Listened for before the lines below say the server is up, so a stop sent on seeing them is handled.
  const stop = () => void host.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  console.log(`Reference: ${host.url}/agents-api/docs`);
  console.log(`curl -H "Authorization: Bearer ${key}" ${host.url}/agents-api/api/agents`);
}
