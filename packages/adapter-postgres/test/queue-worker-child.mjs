/**
 * @module Test child: a worker process that leases jobs from the built `@parley/adapter-postgres`
 * queues, prints their ids as one JSON line, then holds them (never acks) until it is killed.
 * Usage: node queue-worker-child.mjs <database url> <schema> <delivery|reply> <count> <leaseMs>
 */
import pg from 'pg';
import { createPostgresQueues, sqlFromPool } from '@parley/adapter-postgres';

const [url, schema, kind, count, leaseMs] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 2 });
const queues = createPostgresQueues({
  sql: sqlFromPool(pool),
  schema,
  listen: { connection: { connectionString: url } },
  deliveryLeaseMs: Number(leaseMs),
  replyLeaseMs: Number(leaseMs),
});
const leased = [];
while (leased.length < Number(count)) {
  if (kind === 'delivery') {
    for (const item of await queues.deliveryQueue.lease('first', Number(count) - leased.length, 2_000))
      leased.push(item.job.id);
  } else {
    const item = await queues.replyQueue.lease(2_000, { models: ['m'] });
    if (item) leased.push(item.job.id);
  }
}
process.stdout.write(`${JSON.stringify(leased)}\n`);
// Hold the leases, as a worker busy with them would, until killed.
setInterval(() => {}, 60_000);
