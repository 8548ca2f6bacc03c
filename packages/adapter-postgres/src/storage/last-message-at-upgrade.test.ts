/**
 * @module A conversation written before migration 0015, whose `lastMessageAt` and `updatedAt` live
 * only in `data`, read and appended to after it: the column appends now move is laid over `data`
 * (storage/conversations.ts, `CONVERSATION_DATA`), each field the later of the two.
 */
import { recordVersion } from '@parley/core/adapter';
import { Records } from '@parley/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapters } from '../create-postgres-adapters.js';
import { loadMigrations, migrate } from '../migrate.js';
import { sqlFromPool } from '../sql.js';
import { createTestDatabase, describeIfPostgres, probePostgres, type TestDatabase } from '../testing/index.js';

const WS = 'ws_last_message_at';
const scope = { workspaceId: WS };

describeIfPostgres({ describe, it }, await probePostgres())('lastMessageAt after migration 0015', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it("keeps a conversation's earlier appends and moves only forwards from them", async () => {
    const records = new Records();
    const agent = records.agent();
    const earlier = records.message('conv_placeholder');
    // As an append before 0015 left it: both timestamps in `data`, the version raised.
    const conversation = { ...records.conversation(agent.id), lastMessageAt: null as string | null };
    const appended = records.message(conversation.id);
    conversation.lastMessageAt = appended.createdAt;
    const stored = { ...conversation, updatedAt: appended.createdAt };
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      const sql = sqlFromPool(pool);
      await migrate(
        sql,
        'parley',
        loadMigrations().filter((migration) => migration.version <= 14),
      );
      await sql.query(`INSERT INTO parley.agents (workspace_id, id, status, data) VALUES ($1, $2, 'active', $3)`, [
        WS,
        agent.id,
        JSON.stringify(agent),
      ]);
      await sql.query(
        `INSERT INTO parley.conversations (workspace_id, id, agent_id, user_id, status, data, version)
         VALUES ($1, $2, $3, NULL, 'active', $4, 2)`,
        [WS, conversation.id, agent.id, JSON.stringify(stored)],
      );
    } finally {
      await pool.end();
    }

    const adapters = postgresAdapters({ connectionString: database.url, sweepIntervalMs: 0 });
    try {
      await adapters.ready();
      const { conversations, messages } = adapters.storage;
      const read = async () => {
        const found = await conversations.get(scope, conversation.id);
        const listed = (await conversations.list(scope, { offset: 0, limit: 10 })).items;
        expect(listed).toEqual([found]);
        return found!;
      };
      expect(await read()).toEqual(stored);
      expect(recordVersion(await read())).toBe(2);

      // A late append of an older message: neither timestamp moves back, the version moves on.
      const older = { ...earlier, conversationId: conversation.id };
      expect(await messages.append(scope, older, { event: records.event(WS, 'message.sent', older) })).toBe('appended');
      expect(await read()).toEqual(stored);
      expect(recordVersion(await read())).toBe(3);

      // A newer one moves both, in reads, in the next update and in its event.
      const newer = records.message(conversation.id);
      expect(await messages.append(scope, newer, { event: records.event(WS, 'message.sent', newer) })).toBe('appended');
      const moved = { ...stored, lastMessageAt: newer.createdAt, updatedAt: newer.createdAt };
      expect(await read()).toEqual(moved);
      const completed = await conversations.update(scope, conversation.id, {
        set: { status: 'completed' },
        event: records.draft(WS, 'conversation.completed'),
      });
      expect(completed).toEqual({ outcome: 'applied', record: { ...moved, status: 'completed' } });
      const page = await adapters.storage.events.list(scope, { limit: 10, type: 'conversation.completed' });
      expect(page?.events.map((event) => event.data)).toEqual([{ ...moved, status: 'completed' }]);
      expect(recordVersion(completed!.record)).toBe(5);
    } finally {
      await adapters.close();
    }
  });
});
