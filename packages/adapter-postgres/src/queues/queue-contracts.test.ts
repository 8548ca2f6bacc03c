/** @module Core's delivery queue and reply queue contracts on PostgreSQL and on PGlite, each instance its own "process". */
import { runDeliveryQueueContract, runReplyQueueContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { onEachBackend, openTestSchema, type TestSchema } from '../../test/queues-fixture.js';
import { PostgresDeliveryQueue } from './postgres-delivery-queue.js';
import { PostgresReplyQueue } from './postgres-reply-queue.js';

await onEachBackend('queue contracts', (backend) => {
  const fixture = async <Q extends { close(): Promise<void> }>(make: (schema: TestSchema) => Q) => {
    const schema = await openTestSchema(backend());
    const queues: Q[] = [];
    const open = () => {
      const queue = make(schema);
      queues.push(queue);
      return queue;
    };
    return {
      queue: open(),
      peer: open,
      cleanup: async () => {
        for (const queue of queues) await queue.close();
        await schema.cleanup();
      },
    };
  };

  runDeliveryQueueContract({ describe, it, expect }, ({ leaseMs }) =>
    fixture((schema) => new PostgresDeliveryQueue({ ...schema.open(), schema: schema.schema, leaseMs, pollMs: 200 })),
  );
  runReplyQueueContract({ describe, it, expect }, ({ leaseMs }) =>
    fixture((schema) => new PostgresReplyQueue({ ...schema.open(), schema: schema.schema, leaseMs, pollMs: 50 })),
  );
});
