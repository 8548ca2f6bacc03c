/**
 * @module A batch of message appends (`append_messages`, migrations/0013_append_messages.sql) reads
 * the rows of its own conversations, not the table: also with the generic plan PL/pgSQL keeps for a
 * session, and on a table never analysed.
 */
import { Records } from '@parley/core/testing';
import { expect, it } from 'vitest';
import { analyzedPlan, onEachBackend, openTestSchema, recording } from '../../test/queues-fixture.js';
import { PostgresStorage } from '../postgres-storage.js';

const WS = { workspaceId: 'ws_appends' };
const CONVERSATIONS = 20_000;

await onEachBackend('append batch plan', (backend, kind) => {
  it(`a batch of 10 appends to 10 of ${CONVERSATIONS} conversations reads a few pages per append, with the session's generic plan`, async () => {
    const schema = await openTestSchema(backend());
    try {
      const { sql } = schema.open({ listen: false });
      const { sql: recorded, statements } = recording(sql);
      const s = schema.schema;
      const storage = new PostgresStorage({ sql: recorded, schema: s });
      const records = new Records();
      const agent = records.agent();
      await storage.agents.insert(WS, agent, { event: records.event(WS.workspaceId, 'agent.created', agent) });
      await sql.query(
        `INSERT INTO ${s}.conversations (workspace_id, id, agent_id, status, data)
         SELECT $1, 'conv_' || lpad(n::text, 8, '0'), $2, 'active', jsonb_build_object('id', 'conv_' || lpad(n::text, 8, '0'), 'status', 'active')
         FROM generate_series(1, $3::int) AS n`,
        [WS.workspaceId, agent.id, CONVERSATIONS],
      );
      // Ten appends, one to each of ten conversations spread over the table.
      const batch = () =>
        Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const message = records.message(`conv_${String(1 + i * 1_999).padStart(8, '0')}`);
            return storage.messages.append(WS, message, { event: records.sent(WS.workspaceId, message) });
          }),
        );
      expect(await batch()).toEqual(Array(10).fill('appended'));

      // The batch's call again with new message and event ids, rolled back, on a new connection
      // whose first call plans it (with `settings`) and whose second is measured: the plan a
      // session keeps after its fifth call, and its pages without the catalog reads of a first.
      const call = statements.findLast((statement) => statement.text.includes('append_messages'))!;
      const [MESSAGE_IDS, EVENT_IDS] = [2, 5]; // append_messages' third and sixth arguments
      const renamed = (ids: unknown) => (ids as string[]).map((id) => `${id}_again`);
      const params = call.params.map((param, i) => (i === MESSAGE_IDS || i === EVENT_IDS ? renamed(param) : param));
      const pagesRead = async (settings: Record<string, string>) => {
        const { sql: fresh } = schema.open({ listen: false });
        const again = { text: call.text, params };
        await analyzedPlan(fresh, again, { plan_cache_mode: 'force_generic_plan', ...settings });
        const [root] = await analyzedPlan(fresh, again, { plan_cache_mode: 'force_generic_plan', ...settings });
        expect(root!['Actual Rows']).toBe(10);
        return Number(root!['Shared Hit Blocks']) + Number(root!['Shared Read Blocks']);
      };
      // Index probes of 10 conversations and 10 inserts into four tables, their indexes and the
      // foreign keys' checks: about 40 pages per append.
      const pages = await pagesRead({});
      expect(pages).toBeLessThanOrEqual(500);
      // The same batch planned without index scans reads the conversations' table whole besides
      // (on PostgreSQL, where a new connection plans anew; PGlite has one).
      if (kind === 'pglite') return;
      const pagesOfTable = Number(
        (await sql.query<{ n: number }>(`SELECT pg_relation_size('${s}.conversations')::int / 8192 AS n`))[0]!.n,
      );
      expect(await pagesRead({ enable_indexscan: 'off', enable_bitmapscan: 'off' })).toBeGreaterThanOrEqual(
        pages + pagesOfTable,
      );
    } finally {
      await schema.cleanup();
    }
  }, 60_000);
});
