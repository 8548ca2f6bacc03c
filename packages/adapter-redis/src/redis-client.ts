/** @module The ioredis client type every store takes. */
import type { Cluster, Redis } from 'ioredis';

/** A connected ioredis client: standalone `Redis` or `Cluster`. */
export type RedisClient = Redis | Cluster;
