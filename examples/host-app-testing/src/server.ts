/**
 * @module Example (e), production side: the support desk on Redis. Needs a Redis server (6.2 or
 * later) at `REDIS_URL` (default `redis://127.0.0.1:6379`, keys under `REDIS_PREFIX`, default
 * `parley:`); `PORT` (default 3000). It runs Parley's workers: webhook deliveries and agent
 * replies are shared through Redis with every other replica and any `parley worker` on the same
 * Redis and prefix. `WEBHOOK_ALLOW_PRIVATE_URLS=true` allows webhooks to a receiver on loopback or
 * a private network, as in `parley serve`. Start it with `npm run build && npm start -w
 * @parley-examples/host-app-testing`.
 */
import { redisAdapters } from '@parley/adapter-redis';
import { serve } from '@parley/http/server';
import { createSupportDesk } from './app.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = redisAdapters({ url, ...(process.env.REDIS_PREFIX && { prefix: process.env.REDIS_PREFIX }) });
try {
  await redis.ready(2_000);
} catch {
  console.error(`The support desk needs Redis at ${url} (set REDIS_URL, or start one with \`redis-server\`).`);
  await redis.close();
  process.exit(1);
}
const { app, core } = createSupportDesk(redis, {
  settings: { allowPrivateWebhookUrls: process.env.WEBHOOK_ALLOW_PRIVATE_URLS === 'true' },
});
const server = await serve(app, { port: Number(process.env.PORT ?? 3000) });
// Without this, a registered webhook is never delivered and agents never reply.
core.workers.start();
// Drain in-flight requests, then the deliveries and replies in hand, and only then close Redis, which both still use.
// Listened for before the line below says the server is up, so a stop sent on seeing it is handled.
process.once('SIGTERM', async () => {
  await server.close();
  await core.workers.stop();
  await redis.close();
});
console.log(`Support desk on ${server.url}: POST ${server.url}/tickets, Parley's API under ${server.url}/parley/api`);
