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
import { createApp } from '@parley/http';
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const core = createCore(memoryAdapters());
  const { key } = await core.apiKeys.issue({ workspaceId: 'demo', plan: 'pro' });
  const server = await serve(createHostApp(core), { port: Number(process.env.PORT ?? 3000) });
  console.log(`Reference: ${server.url}/agents-api/docs`);
  console.log(`curl -H "Authorization: Bearer ${key}" ${server.url}/agents-api/api/agents`);
  // SIGTERM (a container stop) or Ctrl-C: drain in-flight requests, then exit 0.
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
