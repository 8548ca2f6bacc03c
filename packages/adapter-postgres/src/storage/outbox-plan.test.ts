/**
 * @module The outbox relay's take and ack on PostgreSQL and PGlite read the events of their batch,
 * not of the whole backlog — also on tables never analysed, where the planner knows nothing of how
 * long the backlog is.
 */
import { expect, it } from 'vitest';
import { analyzedPlan, onEachBackend, openTestSchema, recording } from '../../test/queues-fixture.js';
import { PostgresStorage } from '../postgres-storage.js';

const WS = 'ws_backlog';

await onEachBackend('outbox take plan', (backend) => {
  it('a take of 100 from a backlog of 20 000 events reads 100 events, and its ack 100 outbox rows, without statistics', async () => {
    const schema = await openTestSchema(backend());
    try {
      const { sql } = schema.open({ listen: false });
      const { sql: recorded, statements } = recording(sql);
      const storage = new PostgresStorage({ sql: recorded, schema: schema.schema });
      const s = schema.schema;
      await sql.query(
        `WITH e AS (
           INSERT INTO ${s}.events (workspace_id, id, type, event)
           SELECT $1::text, 'evt_' || lpad(n::text, 8, '0'), 'agent.created', json_build_object(
             'id', 'evt_' || lpad(n::text, 8, '0'), 'type', 'agent.created', 'workspaceId', $1::text,
             'occurredAt', '2026-11-27T00:00:00.000Z', 'data', json_build_object())
           FROM generate_series(1, 20000) AS n RETURNING workspace_id, xid, seq
         ), queued AS (INSERT INTO ${s}.outbox (workspace_id, xid, seq) SELECT workspace_id, xid, seq FROM e)
         INSERT INTO ${s}.outbox_leases (workspace_id) VALUES ($1)`,
        [WS],
      );

      const batch = await storage.outbox.take(100, 0);
      expect(batch!.events.map((event) => event.id)).toEqual(
        Array.from({ length: 100 }, (_, i) => `evt_${String(i + 1).padStart(8, '0')}`),
      );
      // The same take again, its lease released first, explained in a transaction rolled back.
      await sql.query(`UPDATE ${s}.outbox_leases SET receipt = NULL, lease_until = NULL`);
      const plan = await analyzedPlan(
        sql,
        statements.find((statement) => statement.text.includes('candidate'))!,
      );
      const eventsRead = plan
        .filter((node) => node['Relation Name'] === 'events')
        .reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']), 0);
      expect(eventsRead).toBe(100);

      // Its ack deletes those 100 outbox rows, reading no more of the backlog than them (explained
      // after the ack: a plan that scanned the backlog would still read the other 19 900).
      await storage.outbox.ack(batch!);
      const ackPlan = await analyzedPlan(
        sql,
        statements.find((statement) => statement.text.includes('DELETE FROM'))!,
      );
      const backlogRead = ackPlan
        .filter((node) => /^(outbox|events)(_|$)/.test(String(node['Relation Name'] ?? node['Index Name'])))
        .reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']), 0);
      expect(backlogRead).toBeLessThanOrEqual(100);
      expect(Number((await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.outbox`))[0]!.n)).toBe(19_900);
    } finally {
      await schema.cleanup();
    }
  });
});
