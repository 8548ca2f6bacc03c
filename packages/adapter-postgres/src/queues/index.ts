/** @module The queues and the feed on PostgreSQL, made together over one `Sql` and one LISTEN connection per process. */
import type pg from 'pg';
import type { PgliteDatabase, Sql } from '../sql.js';
import { type Notifier, PgliteNotifier, PgNotifier } from './notifier.js';
import { PostgresConversationFeed } from './postgres-conversation-feed.js';
import { PostgresDeliveryQueue } from './postgres-delivery-queue.js';
import { PostgresReplyQueue } from './postgres-reply-queue.js';
import { QueueVacuum } from './queue-vacuum.js';

export { type Notifier, type Unlisten, PgNotifier, PgliteNotifier, type PgNotifierOptions } from './notifier.js';
export { PostgresDeliveryQueue, type PostgresDeliveryQueueOptions } from './postgres-delivery-queue.js';
export { PostgresReplyQueue, type PostgresReplyQueueOptions } from './postgres-reply-queue.js';
export { PostgresConversationFeed, type PostgresConversationFeedOptions } from './postgres-conversation-feed.js';
export { queueChannel, feedChannel } from './channels.js';
export { QueueVacuum, type QueueVacuumOptions } from './queue-vacuum.js';

/**
 * Where this process LISTENs: a node-postgres connection config for one dedicated connection (the
 * pool's own settings, or `DATABASE_LISTEN_URL`'s direct connection behind a transaction-mode
 * pooler), the PGlite instance itself, or `false` where LISTEN is unavailable (queues then poll
 * every ≤ 1 s, and the feed goes through its table; every process of a deployment must agree).
 */
export type ListenOptions = { connection: pg.ClientConfig } | { pglite: PgliteDatabase } | false;

/** Options of {@link createPostgresQueues}. */
export interface PostgresQueuesOptions {
  sql: Sql;
  /** The schema migrated with `0002_queues.sql`; default `parley`. */
  schema?: string;
  listen: ListenOptions;
  /** Delivery job lease in ms; default 30 000. */
  deliveryLeaseMs?: number;
  /** Reply lease in ms; default 30 000. */
  replyLeaseMs?: number;
  /** How often the queue tables are vacuumed, in ms ({@link QueueVacuum}); default 30 000; `false`: never (autovacuum alone). */
  vacuumEveryMs?: number | false;
}

/** The three members of the `Adapters` bundle this module makes, and what closes them. */
export interface PostgresQueues {
  deliveryQueue: PostgresDeliveryQueue;
  replyQueue: PostgresReplyQueue;
  conversationFeed: PostgresConversationFeed;
  /** The LISTEN side, `null` when polling; its `onReconnect` tells when notifications may have been lost. */
  notifier: Notifier | null;
  /** Ends waiting leases, stops polling, closes the LISTEN connection; never the `Sql`. Idempotent. */
  close(): Promise<void>;
}

/**
 * The delivery queue, reply queue and conversation feed over `sql`, sharing one notifier (one
 * dedicated LISTEN connection per process, opened at the first wait or subscription), and the
 * timer that vacuums their tables.
 */
export function createPostgresQueues(options: PostgresQueuesOptions): PostgresQueues {
  const { sql, schema, listen } = options;
  const notifier: Notifier | null =
    listen === false
      ? null
      : 'pglite' in listen
        ? new PgliteNotifier(listen.pglite)
        : new PgNotifier({ connection: listen.connection });
  const deliveryQueue = new PostgresDeliveryQueue({ sql, schema, notifier, leaseMs: options.deliveryLeaseMs });
  const replyQueue = new PostgresReplyQueue({ sql, schema, notifier, leaseMs: options.replyLeaseMs });
  const conversationFeed = new PostgresConversationFeed({ sql, schema, notifier });
  const vacuum =
    options.vacuumEveryMs === false ? undefined : new QueueVacuum({ sql, schema, everyMs: options.vacuumEveryMs });
  vacuum?.start();
  let closing: Promise<void> | undefined;
  return {
    deliveryQueue,
    replyQueue,
    conversationFeed,
    notifier,
    close: () =>
      (closing ??= (async () => {
        await Promise.all([deliveryQueue.close(), replyQueue.close(), conversationFeed.close(), vacuum?.stop()]);
        await notifier?.close();
      })()),
  };
}
