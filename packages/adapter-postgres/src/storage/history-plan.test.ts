/**
 * @module A history page on PostgreSQL and PGlite reads the page's rows from the primary key, not
 * the conversation — also on a table never analysed (a bulk load before autovacuum's first pass),
 * where the planner knows nothing of how long a conversation is.
 */
import { Records } from '@parley/core/testing';
import { expect, it } from 'vitest';
import { analyzedPlan, onEachBackend, openTestSchema, recording } from '../../test/queues-fixture.js';
import { PostgresStorage } from '../postgres-storage.js';

const WS = 'ws_history';

await onEachBackend('history page plan', (backend) => {
  it('a page reads limit + 1 rows of a 100 000-message conversation, first page and with a cursor, without statistics', async () => {
    const schema = await openTestSchema(backend());
    try {
      const { sql } = schema.open({ listen: false });
      const { sql: recorded, statements } = recording(sql);
      const storage = new PostgresStorage({ sql: recorded, schema: schema.schema });
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      await sql.query(
        `INSERT INTO ${schema.schema}.messages (workspace_id, conversation_id, id, data)
         SELECT $1, $2, 'msg_' || lpad(n::text, 8, '0'), json_build_object('id', 'msg_' || lpad(n::text, 8, '0'))
         FROM generate_series(1, 100000) AS n`,
        [WS, conversation.id],
      );

      for (const before of [undefined, 'msg_00050000']) {
        statements.length = 0;
        const page = await storage.messages.page({ workspaceId: WS }, conversation.id, {
          limit: 50,
          ...(before && { before }),
        });
        expect(page!.messages.at(-1)!.id).toBe(before ? 'msg_00049999' : 'msg_00100000');
        const plan = await analyzedPlan(
          sql,
          statements.find((statement) => statement.text.includes('json_agg'))!,
        );
        // The page's read (the cursor's existence check is an index-only probe of one key).
        const read = plan.filter(
          (node) => node['Relation Name'] === 'messages' && node['Node Type'] !== 'Index Only Scan',
        );
        expect(read.map((node) => node['Node Type'])).toEqual(['Index Scan']);
        expect(read[0]!['Actual Rows']).toBe(51);
      }
    } finally {
      await schema.cleanup();
    }
  });
});
