/**
 * @module Example (e), production side: the support desk on Redis. Needs a Redis server (6.2 or
 * later) at `REDIS_URL` (default `redis://127.0.0.1:6379`); `PORT` (default 3000). Webhook
 * delivery jobs wait in Redis's delivery queue (part of `redisAdapters()`), shared with any
 * `parley worker` on the same Redis. Not run by the tests, which swap in the memory adapters
 * instead. Start it with `npm run build && npm start -w @parley-examples/host-app-testing`.
 */
import { redisAdapters } from '@parley/adapter-redis';
import { serve } from '@parley/http/server';
import { createSupportDesk } from './app.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = redisAdapters({ url });
try {
  await redis.ready(5_000);
} catch {
  console.error(`The support desk needs Redis at ${url} (set REDIS_URL, or start one with \`redis-server\`).`);
  await redis.close();
  process.exit(1);
}
const { app } = createSupportDesk(redis);
const server = await serve(app, { port: Number(process.env.PORT ?? 3000) });
console.log(`Support desk on ${server.url}: POST ${server.url}/tickets, Parley's API under ${server.url}/parley/api`);
process.once('SIGTERM', () => void server.close().then(() => redis.close()));
