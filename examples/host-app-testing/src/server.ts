/**
 * @module Example (e), production side: the support desk on Redis (`REDIS_URL`). Not run by the
 * tests, which swap in the memory adapters instead; `npm start` needs a Redis server.
 */
import { redisAdapters } from '@parley/adapter-redis';
import { serve } from '@parley/http/server';
import { createSupportDesk } from './app.js';

const redis = redisAdapters({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
const { app } = createSupportDesk(redis);
const server = await serve(app, { port: Number(process.env.PORT ?? 3000) });
console.log(`Support desk on ${server.url}`);
process.once('SIGTERM', () => void server.close().then(() => redis.close()));
