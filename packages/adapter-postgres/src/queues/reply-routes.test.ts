/**
 * @module The reply queue's routing on PostgreSQL and PGlite: a claim reads only the heads of the
 * models it names (checked on the plan), and jobs queued before migration 0007 are served in order.
 */
import { expect, it } from 'vitest';
import { analyzedPlan, onEachBackend, openTestSchema, recording } from '../../test/queues-fixture.js';
import { loadMigrations, migrate } from '../migrate.js';
import { PostgresReplyQueue } from './postgres-reply-queue.js';

await onEachBackend('reply queue routing', (backend) => {
  it("a claim reads its models' heads from the partial index: few rows, however many jobs wait", async () => {
    const schema = await openTestSchema(backend());
    try {
      const { sql } = schema.open({ listen: false });
      const { sql: recorded, statements } = recording(sql);
      const queue = new PostgresReplyQueue({ sql: recorded, schema: schema.schema, notifier: null });
      const job = (conversation: string, model: string, at: number) =>
        JSON.stringify({
          id: `rpl_${conversation}_${at}`,
          workspaceId: 'ws',
          conversationId: conversation,
          inReplyTo: null,
          requestedAt: at,
          model,
        });
      // 20 000 conversations waiting for a model nobody here has, all asked earlier.
      await sql.query(
        `INSERT INTO ${schema.schema}.reply_jobs (workspace_id, conversation_id, requested_at, job, model)
         SELECT 'ws', 'other_' || n, n, $1, 'other' FROM generate_series(1, 20000) AS n`,
        [job('other', 'other', 0)],
      );
      // One conversation of 'mine' with 2 000 requests queued: its head is leased below.
      await sql.query(
        `INSERT INTO ${schema.schema}.reply_jobs (workspace_id, conversation_id, requested_at, job, model)
         SELECT 'ws', 'busy', 30000 + n, $1, 'mine' FROM generate_series(1, 2000) AS n`,
        [job('busy', 'mine', 30_001)],
      );
      await sql.exec(`ANALYZE ${schema.schema}.reply_jobs`);
      const busy = await queue.lease(0, { models: ['mine'] });
      expect(busy?.job.conversationId).toBe('busy');
      await queue.enqueue(JSON.parse(job('fresh', 'mine', 40_000)));

      statements.length = 0;
      // Overdue: asked before 1, which none of them was.
      const leased = await queue.lease(0, { models: ['mine'], askedBefore: 1 });
      expect(leased?.job.conversationId).toBe('fresh');
      const lease = statements.find((statement) => statement.text.includes('candidates'))!;
      const plan = await analyzedPlan(sql, lease);
      const scans = plan.filter(
        (node) => node['Relation Name'] === 'reply_jobs' && String(node['Node Type']).includes('Scan'),
      );
      expect(scans.map((node) => node['Node Type'])).not.toContain('Seq Scan');
      expect(scans.map((node) => node['Index Name'])).toEqual(
        expect.arrayContaining(['reply_jobs_ready', 'reply_jobs_overdue']),
      );
      const read = scans.reduce(
        (sum, node) =>
          sum +
          Number(node['Actual Rows'] ?? 0) * Number(node['Actual Loops'] ?? 1) +
          Number(node['Rows Removed by Filter'] ?? 0),
        0,
      );
      // The leased head passed over, the fresh head taken, the lease's own lookup by seq.
      expect(read).toBeLessThan(20);
    } finally {
      await schema.cleanup();
    }
  });

  it('jobs queued before migration 0007 are leased by any claim, one at a time, in order', async () => {
    const schema = await openTestSchema(backend());
    try {
      const { sql } = schema.open({ listen: false });
      const name = `${schema.schema}_old`;
      const migrations = loadMigrations();
      await migrate(
        sql,
        name,
        migrations.filter((migration) => migration.version < 7),
      );
      const jobs = [1, 2, 3].map((n) => ({
        id: `rpl_${n}`,
        workspaceId: 'ws',
        conversationId: n === 3 ? 'b' : 'a',
        inReplyTo: null,
        requestedAt: n,
      }));
      for (const job of jobs) {
        await sql.query(
          `INSERT INTO ${name}.reply_jobs (workspace_id, conversation_id, requested_at, job) VALUES ($1, $2, $3, $4)`,
          [job.workspaceId, job.conversationId, job.requestedAt, JSON.stringify(job)],
        );
      }
      await migrate(sql, name);
      const queue = new PostgresReplyQueue({ sql, schema: name, notifier: null });
      const claim = { models: ['anything'] };
      const first = await queue.lease(0, claim);
      const second = await queue.lease(0, claim);
      expect([first?.job, second?.job]).toEqual([
        { ...jobs[0], model: '' },
        { ...jobs[2], model: '' },
      ]);
      expect(await queue.lease(0, claim)).toBeNull();
      expect(await queue.ack(first!)).toBe(true);
      expect((await queue.lease(0, claim))?.job).toEqual({ ...jobs[1], model: '' });
      await queue.close();
      await sql.query(`DROP SCHEMA ${name} CASCADE`);
    } finally {
      await schema.cleanup();
    }
  });
});
