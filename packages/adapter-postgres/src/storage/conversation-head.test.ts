/**
 * @module A conversation as read on PostgreSQL (migrations/0012_conversation_head.sql): appends do
 * not write its row, its `lastMessageAt`, `updatedAt` and version come from its newest message —
 * also for a write that waited for an append (read after the wait, not from the write's snapshot),
 * for a late-arriving older message, and for messages stored before the migration.
 */
import { randomUUID } from 'node:crypto';
import type { Conversation } from '@parley/core';
import { recordVersion } from '@parley/core/adapter';
import { Records } from '@parley/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzedPlan, recording } from '../../test/queues-fixture.js';
import { migrate } from '../migrate.js';
import { PostgresStorage } from '../postgres-storage.js';
import { sqlFromPool, type Sql } from '../sql.js';
import { createTestDatabase, describeIfPostgres, probePostgres, type TestDatabase } from '../testing/index.js';

const WS = { workspaceId: 'ws_head' };

/** A transaction left open until `commit`; `sql` runs statements in it. */
async function openTransaction(pool: pg.Pool): Promise<{ sql: Sql; commit: () => Promise<void> }> {
  let inside!: (tx: Sql) => void;
  let finish!: () => void;
  const entered = new Promise<Sql>((resolve) => (inside = resolve));
  const decided = new Promise<void>((resolve) => (finish = resolve));
  const done = sqlFromPool(pool).transaction(async (tx) => {
    inside(tx);
    await decided;
  });
  return { sql: await entered, commit: () => (finish(), done) };
}

/** Resolves after `ms`. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeIfPostgres({ describe, it }, await probePostgres())('a conversation as read on PostgreSQL', () => {
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

  const conversation = async (): Promise<Conversation> => {
    const agent = await records.insertAgent(storage, WS.workspaceId);
    return read((await records.insertConversation(storage, WS.workspaceId, agent.id)).id);
  };
  const read = async (id: string) => (await storage.conversations.get(WS, id))!;
  const rowVersion = async (id: string) =>
    (await pool.query(`SELECT version FROM ${schema}.conversations WHERE id = $1`, [id])).rows[0].version as number;

  it("an append leaves the conversation's row alone; reads, lists and a PATCH show its message", async () => {
    const stored = await conversation();
    const message = records.message(stored.id, { createdAt: '2026-03-02T10:00:00.000Z' });
    expect(await storage.messages.append(WS, message, { event: records.sent(WS.workspaceId, message) })).toBe(
      'appended',
    );
    expect(await rowVersion(stored.id)).toBe(recordVersion(stored));
    const after = await read(stored.id);
    expect(after).toMatchObject({ lastMessageAt: message.createdAt, updatedAt: message.createdAt });
    expect(recordVersion(after)).toBe(recordVersion(stored) + 1);
    const listed = (await storage.conversations.list(WS, { offset: 0, limit: 100, agentId: stored.agentId })).items;
    expect(listed).toEqual([after]);
    const patched = await storage.conversations.update(WS, stored.id, { set: { metadata: { k: 'v' } } });
    expect(patched?.record).toMatchObject({ lastMessageAt: message.createdAt, metadata: { k: 'v' } });
    expect(recordVersion(patched!.record)).toBe(recordVersion(stored) + 2);
  });

  it('a completion that waited for an append answers, and records its event, with that append in it', async () => {
    const stored = await conversation();
    const open = await openTransaction(pool);
    const message = records.message(stored.id, { createdAt: '2026-03-02T11:00:00.000Z' });
    const held = new PostgresStorage({ sql: open.sql, schema });
    expect(await held.messages.append(WS, message, { event: records.sent(WS.workspaceId, message) })).toBe('appended');
    // The PATCH's statement starts (and takes its snapshot) before the append commits.
    const patched = storage.conversations.update(WS, stored.id, {
      set: { status: 'completed' },
      event: records.draft(WS.workspaceId, 'conversation.completed'),
    });
    await sleep(300);
    await open.commit();
    const { record } = (await patched)!;
    expect(record.lastMessageAt).toBe(message.createdAt);
    expect(recordVersion(record)).toBe(recordVersion(stored) + 2);
    expect(await read(stored.id)).toEqual(record);
    const [event] = (await storage.events.list(WS, { limit: 100, type: 'conversation.completed' }))!.events.slice(-1);
    expect((event!.data as Conversation).lastMessageAt).toBe(message.createdAt);
  });

  it("an append that waited for another append to its conversation counts it (another process's batch)", async () => {
    const stored = await conversation();
    const open = await openTransaction(pool);
    const first = records.message(stored.id, { createdAt: '2026-03-02T12:00:00.000Z' });
    const held = new PostgresStorage({ sql: open.sql, schema });
    expect(await held.messages.append(WS, first, { event: records.sent(WS.workspaceId, first) })).toBe('appended');
    const second = records.message(stored.id, { createdAt: '2026-03-02T12:00:01.000Z' });
    const appended = storage.messages.append(WS, second, { event: records.sent(WS.workspaceId, second) });
    await sleep(300);
    await open.commit();
    expect(await appended).toBe('appended');
    const after = await read(stored.id);
    expect(after.lastMessageAt).toBe(second.createdAt);
    expect(recordVersion(after)).toBe(recordVersion(stored) + 2);
  });

  it('a late-arriving older message moves the version, and never moves lastMessageAt backwards', async () => {
    const stored = await conversation();
    const newer = records.message(stored.id, { createdAt: '2026-03-02T13:00:00.000Z' });
    // Older ids (made by a process whose clock is behind), one with a later createdAt, one with an earlier.
    const late = records.message(stored.id, {
      id: `${newer.id}`.replace(/^msg_../, 'msg_00'),
      createdAt: '2026-03-02T13:00:05.000Z',
    });
    const older = records.message(stored.id, {
      id: `${newer.id}`.replace(/^msg_.../, 'msg_000'),
      createdAt: '2026-03-01T00:00:00.000Z',
    });
    expect([older.id, late.id, newer.id]).toEqual([older.id, late.id, newer.id].sort());
    for (const message of [newer, late, older])
      expect(await storage.messages.append(WS, message, { event: records.sent(WS.workspaceId, message) })).toBe(
        'appended',
      );
    const after = await read(stored.id);
    expect(after).toMatchObject({ lastMessageAt: late.createdAt, updatedAt: late.createdAt });
    expect(recordVersion(after)).toBe(recordVersion(stored) + 3);
    const page = await storage.messages.page(WS, stored.id, { limit: 10 });
    expect(page?.messages.map((message) => message.id)).toEqual([older.id, late.id, newer.id]);
  });

  it('messages stored before the migration (no figures) keep the version and lastMessageAt the row holds', async () => {
    const stored = await conversation();
    const legacy = records.message(stored.id, { createdAt: '2026-03-02T14:00:00.000Z' });
    expect(await storage.messages.append(WS, legacy, { event: records.sent(WS.workspaceId, legacy) })).toBe('appended');
    // As an append before migration 0012 left it: the row moved, the message without figures.
    await pool.query(
      `UPDATE ${schema}.conversations SET version = version + 1, data = data || jsonb_build_object('lastMessageAt', $2::text, 'updatedAt', $2::text) WHERE id = $1`,
      [stored.id, legacy.createdAt],
    );
    await pool.query(`UPDATE ${schema}.messages SET appends = NULL, last_message_at = NULL WHERE id = $1`, [legacy.id]);
    const before = await read(stored.id);
    expect(before.lastMessageAt).toBe(legacy.createdAt);
    expect(recordVersion(before)).toBe(recordVersion(stored) + 1);
    const next = records.message(stored.id, { createdAt: '2026-03-02T14:00:01.000Z' });
    expect(await storage.messages.append(WS, next, { event: records.sent(WS.workspaceId, next) })).toBe('appended');
    const after = await read(stored.id);
    expect(after.lastMessageAt).toBe(next.createdAt);
    expect(recordVersion(after)).toBe(recordVersion(stored) + 2);
  });

  it('a read and a list probe one message of a 100 000-message conversation, without statistics', async () => {
    const { sql, statements } = recording(sqlFromPool(pool));
    const recorded = new PostgresStorage({ sql, schema });
    const stored = await conversation();
    await pool.query(
      `INSERT INTO ${schema}.messages (workspace_id, conversation_id, id, data, appends, last_message_at)
       SELECT $1, $2, 'msg_' || lpad(n::text, 8, '0'), '{}', n, '2026-03-03T00:00:00.000Z' FROM generate_series(1, 100000) AS n`,
      [WS.workspaceId, stored.id],
    );
    expect(recordVersion((await recorded.conversations.get(WS, stored.id))!)).toBe(recordVersion(stored) + 100_000);
    await recorded.conversations.list(WS, { offset: 0, limit: 10, agentId: stored.agentId });
    expect(statements).toHaveLength(2);
    for (const statement of statements) {
      const probes = (await analyzedPlan(sqlFromPool(pool), statement)).filter(
        (node) => node['Relation Name'] === 'messages',
      );
      expect(probes.map((node) => [node['Node Type'], node['Scan Direction'], node['Actual Rows']])).toEqual([
        ['Index Scan', 'Backward', 1],
      ]);
    }
  });
});
