/**
 * @module The outbox relay's take and ack on PostgreSQL and PGlite read the events of their batch,
 * not of the whole backlog — also on tables never analysed, where the planner knows nothing of how
 * long the backlog is, and behind rows acknowledged since the last VACUUM, whose index entries stay.
 */
import { expect, it } from 'vitest';
import {
  analyzedPlan,
  onEachBackend,
  openTestSchema,
  recording,
  type Statement,
  type TestBackend,
} from '../../test/queues-fixture.js';
import type { Sql } from '../sql.js';
import { PostgresStorage } from '../postgres-storage.js';

const WS = 'ws_backlog';

/** What a test of the outbox's plans gets: its connection, the statements storage ran, the storage and the schema. */
interface Backlog {
  sql: Sql;
  statements: Statement[];
  storage: PostgresStorage;
  s: string;
}

/**
 * Runs `test` on a fresh schema whose outbox holds `count` events `evt_00000001`… of `WS` (one
 * transaction) and their lease row; autovacuum is off for the outbox, so no VACUUM removes
 * deleted rows' index entries while a test looks at them.
 */
async function withBacklog(backend: TestBackend, count: number, test: (backlog: Backlog) => Promise<void>) {
  const schema = await openTestSchema(backend);
  try {
    const { sql } = schema.open({ listen: false });
    const { sql: recorded, statements } = recording(sql);
    const s = schema.schema;
    await sql.query(`ALTER TABLE ${s}.outbox SET (autovacuum_enabled = false)`);
    await sql.query(
      `WITH e AS (
         INSERT INTO ${s}.events (workspace_id, id, type, event)
         SELECT $1::text, 'evt_' || lpad(n::text, 8, '0'), 'agent.created', json_build_object(
           'id', 'evt_' || lpad(n::text, 8, '0'), 'type', 'agent.created', 'workspaceId', $1::text,
           'occurredAt', '2026-11-27T00:00:00.000Z', 'data', json_build_object())
         FROM generate_series(1, $2::int) AS n RETURNING workspace_id, xid, seq
       ), queued AS (INSERT INTO ${s}.outbox (workspace_id, xid, seq) SELECT workspace_id, xid, seq FROM e)
       INSERT INTO ${s}.outbox_leases (workspace_id) VALUES ($1)`,
      [WS, count],
    );
    await test({ sql, statements, storage: new PostgresStorage({ sql: recorded, schema: s }), s });
  } finally {
    await schema.cleanup();
  }
}

/** Shared buffers a plan node read, its children's included (`EXPLAIN (ANALYZE, BUFFERS)`). */
const blocks = (node: Record<string, unknown>) =>
  Number(node['Shared Hit Blocks']) + Number(node['Shared Read Blocks']);

/**
 * Pages of the outbox a plan's scans read: its heap and primary key, scanned directly or inside
 * `outbox_page` (whose reads count to its node), each node's own reads only; not a delete's visits
 * to the rows it deletes (one per row).
 */
const outboxPagesRead = (plan: Array<Record<string, unknown>>) =>
  plan
    .filter(
      (node) =>
        node['Node Type'] !== 'ModifyTable' &&
        (node['Relation Name'] === 'outbox' ||
          node['Index Name'] === 'outbox_pkey' ||
          node['Function Name'] === 'outbox_page'),
    )
    .reduce(
      (sum, node) =>
        sum +
        blocks(node) -
        ((node.Plans as Array<Record<string, unknown>> | undefined) ?? []).reduce((n, child) => n + blocks(child), 0),
      0,
    );

/** The ids `evt_<from>` … `evt_<from + count - 1>`. */
const eventIds = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `evt_${String(from + i).padStart(8, '0')}`);

await onEachBackend('outbox take plan', (backend) => {
  it('a take of 100 from a backlog of 20 000 events reads 100 events, and its ack 100 outbox rows, without statistics', () =>
    withBacklog(backend(), 20_000, async ({ sql, statements, storage, s }) => {
      const batch = await storage.outbox.take(100, 0);
      expect(batch!.events.map((event) => event.id)).toEqual(eventIds(1, 100));
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
      // …and a few pages of the outbox: its 100 rows, not the 20 000 behind them (a bitmap of the
      // whole backlog, sorted, for the check and the page: 578).
      expect(outboxPagesRead(plan)).toBeLessThanOrEqual(12);

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
    }));

  it('a take and its ack read a few pages of the outbox behind 19 900 rows acknowledged since the last VACUUM', () =>
    withBacklog(backend(), 20_000, async ({ sql, statements, storage, s }) => {
      for (let acked = 0; acked < 19_900; acked += 995) await storage.outbox.ack((await storage.outbox.take(995, 0))!);

      const batch = await storage.outbox.take(100, 0);
      expect(batch!.events.map((event) => event.id)).toEqual(eventIds(19_901, 100));
      // The outbox's pages the take reads, explained again with its lease released; from the first
      // entry of the workspace it would step over the 19 900 deleted rows' entries: 122 pages.
      await sql.query(`UPDATE ${s}.outbox_leases SET receipt = NULL, lease_until = NULL`);
      const takes = statements.filter((statement) => statement.text.includes('candidate'));
      expect(outboxPagesRead(await analyzedPlan(sql, takes.at(-1)!))).toBeLessThanOrEqual(12);

      // Its ack, explained before it runs (the statement of the acks before, with this batch's
      // receipt: its lease and last position), then run.
      const [lease, xid, seq] = batch!.receipt.split(':');
      const ackText = statements.findLast((statement) => statement.text.includes('DELETE FROM'))!.text;
      expect(
        outboxPagesRead(await analyzedPlan(sql, { text: ackText, params: [WS, xid, seq, lease] })),
      ).toBeLessThanOrEqual(12);
      await storage.outbox.ack(batch!);
      expect(Number((await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.outbox`))[0]!.n)).toBe(0);
    }));
});
