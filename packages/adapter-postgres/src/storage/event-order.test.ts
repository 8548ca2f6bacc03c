/**
 * @module The event log's order on PostgreSQL (migrations/0011_event_order.sql): writes of one
 * workspace do not wait for each other's commits, and readers (GET /api/events, the outbox) never
 * pass an event whose transaction could still commit behind them.
 */
import { randomUUID } from 'node:crypto';
import { Records } from '@parley/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.js';
import { PostgresStorage } from '../postgres-storage.js';
import { sqlFromPool, type Sql } from '../sql.js';
import { createTestDatabase, describeIfPostgres, probePostgres, type TestDatabase } from '../testing/index.js';

const WS = { workspaceId: 'ws_order' };

/** A transaction left open until `end` commits or rolls it back; `sql` runs statements in it. */
async function openTransaction(
  pool: pg.Pool,
): Promise<{ sql: Sql; end: (outcome: 'COMMIT' | 'ROLLBACK') => Promise<void> }> {
  let inside!: (tx: Sql) => void;
  let finish!: (outcome: 'COMMIT' | 'ROLLBACK') => void;
  const entered = new Promise<Sql>((resolve) => (inside = resolve));
  const decided = new Promise<'COMMIT' | 'ROLLBACK'>((resolve) => (finish = resolve));
  const done = sqlFromPool(pool)
    .transaction(async (tx) => {
      inside(tx);
      if ((await decided) === 'ROLLBACK') throw new Error('rolled back by the test');
    })
    .catch(() => {});
  return {
    sql: await entered,
    end: async (outcome) => {
      finish(outcome);
      await done;
    },
  };
}

describeIfPostgres({ describe, it }, await probePostgres())('the event log on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let schema: string;
  let storage: PostgresStorage;
  const records = new Records();
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 6 });
    pool.on('error', () => {});
    schema = `t_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await migrate(sqlFromPool(pool), schema);
    storage = new PostgresStorage({ sql: sqlFromPool(pool), schema });
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  const ids = async (after?: string) =>
    (await storage.events.list(WS, { limit: 100, ...(after ? { after } : {}) }))!.events.map((event) => event.id);

  it('an append to one conversation does not wait for an open append to another of the same workspace; readers wait for the older one', async () => {
    const agent = await records.insertAgent(storage, WS.workspaceId);
    const first = await records.insertConversation(storage, WS.workspaceId, agent.id);
    const second = await records.insertConversation(storage, WS.workspaceId, agent.id);
    const before = await ids();

    // An append whose transaction stays open: it holds its rows and has the older transaction id.
    const open = await openTransaction(pool);
    const held = new PostgresStorage({ sql: open.sql, schema });
    const early = records.message(first.id);
    const earlyEvent = records.sent(WS.workspaceId, early);
    expect(await held.messages.append(WS, early, { event: earlyEvent })).toBe('appended');

    // Another conversation's append commits at once (with a workspace-wide counter it waited).
    const late = records.message(second.id);
    const lateEvent = records.sent(WS.workspaceId, late);
    const started = Date.now();
    expect(await storage.messages.append(WS, late, { event: lateEvent })).toBe('appended');
    expect(Date.now() - started).toBeLessThan(2_000);

    // Committed, but behind a transaction still running: neither the log nor the outbox passes it.
    expect(await ids()).toEqual(before);
    expect(await storage.events.get(WS, lateEvent.id)).toMatchObject({ id: lateEvent.id });

    // The older one commits: both are read, in transaction order, by a reader that had stopped before.
    await open.end('COMMIT');
    expect(await ids(before.at(-1))).toEqual([earlyEvent.id, lateEvent.id]);
  });

  it('an event whose transaction rolls back never appears, and the ones after it do', async () => {
    const agent = await records.insertAgent(storage, WS.workspaceId);
    const conversation = await records.insertConversation(storage, WS.workspaceId, agent.id);
    const other = await records.insertConversation(storage, WS.workspaceId, agent.id);
    const before = await ids();

    const open = await openTransaction(pool);
    const held = new PostgresStorage({ sql: open.sql, schema });
    const lost = records.message(conversation.id);
    expect(await held.messages.append(WS, lost, { event: records.sent(WS.workspaceId, lost) })).toBe('appended');
    const kept = records.message(other.id);
    const keptEvent = records.sent(WS.workspaceId, kept);
    expect(await storage.messages.append(WS, kept, { event: keptEvent })).toBe('appended');
    await open.end('ROLLBACK');

    expect(await ids(before.at(-1))).toEqual([keptEvent.id]);
  });

  it("another database's open transaction holds back nothing here", async () => {
    const other = await createTestDatabase();
    const client = new pg.Client({ connectionString: other.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_current_xact_id()'); // gives it a transaction id, older than ours
      const agent = await records.insertAgent(storage, WS.workspaceId);
      const conversation = await records.insertConversation(storage, WS.workspaceId, agent.id);
      const before = await ids();
      const message = records.message(conversation.id);
      const event = records.sent(WS.workspaceId, message);
      expect(await storage.messages.append(WS, message, { event })).toBe('appended');
      const started = Date.now();
      expect(await ids(before.at(-1))).toEqual([event.id]);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      await client.end();
      await other.drop();
    }
  });

  it('the outbox hands out an event only once the transactions older than it have ended', async () => {
    // Drain what the tests before recorded.
    for (let batch = await storage.outbox.take(100, 0); batch; batch = await storage.outbox.take(100, 0))
      await storage.outbox.ack(batch);
    const agent = await records.insertAgent(storage, WS.workspaceId);
    const conversation = await records.insertConversation(storage, WS.workspaceId, agent.id);
    const other = await records.insertConversation(storage, WS.workspaceId, agent.id);
    for (let batch = await storage.outbox.take(100, 0); batch; batch = await storage.outbox.take(100, 0))
      await storage.outbox.ack(batch);

    const open = await openTransaction(pool);
    const held = new PostgresStorage({ sql: open.sql, schema });
    const early = records.message(conversation.id);
    const earlyEvent = records.sent(WS.workspaceId, early);
    expect(await held.messages.append(WS, early, { event: earlyEvent })).toBe('appended');
    const late = records.message(other.id);
    const lateEvent = records.sent(WS.workspaceId, late);
    expect(await storage.messages.append(WS, late, { event: lateEvent })).toBe('appended');

    expect(await storage.outbox.take(100, 300)).toBeNull();
    await open.end('COMMIT');
    const batch = await storage.outbox.take(100, 1_000);
    expect(batch?.events.map((event) => event.id)).toEqual([earlyEvent.id, lateEvent.id]);
    await storage.outbox.ack(batch!);
  });
});
