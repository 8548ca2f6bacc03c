/** @module Storage contract: usage totals, counted with each reply step's message in the same atomic step. */
import type { Storage, UsageRecord } from '../../ports/storage.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { OTHER_WS, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.usage`. */
export function usageTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'usage', open, skip, (test) => {
    /** Stores a reply step on `createdAt` counted with `usage`; resolves with the append's outcome. */
    async function step(
      storage: Storage,
      records: Records,
      conversationId: string,
      createdAt: string,
      usage: UsageRecord,
      workspaceId = WS,
    ) {
      const message = records.message(conversationId, { role: 'assistant', createdAt, metadata: { reply: { usage } } });
      return storage.messages.append({ workspaceId }, message, {
        event: records.sent(workspaceId, message),
        usage: usage,
      });
    }

    test('totals add up the usage of the steps stored, per agent, model, user and UTC day', async (storage) => {
      const records = new Records();
      const ada = await records.insertAgent(storage, WS);
      const bob = await records.insertAgent(storage, WS);
      const withUser = await records.insertConversation(storage, WS, ada.id, { userId: 'u|1' });
      const withoutUser = await records.insertConversation(storage, WS, bob.id);
      const use = (
        agentId: string,
        userId: string | null,
        model: string,
        inputTokens: number,
        outputTokens: number,
      ) => ({ agentId, userId, model, inputTokens, outputTokens });
      expect(
        await step(storage, records, withUser.id, '2026-03-01T23:59:59.999Z', use(ada.id, 'u|1', 'm-1', 10, 1)),
      ).toBe('appended');
      expect(
        await step(storage, records, withUser.id, '2026-03-02T00:00:00.000Z', use(ada.id, 'u|1', 'm-2', 20, 2)),
      ).toBe('appended');
      expect(
        await step(storage, records, withoutUser.id, '2026-03-02T12:00:00.000Z', use(bob.id, null, 'm-1', 300, 3)),
      ).toBe('appended');
      // Not stored (the conversation is unknown): not counted.
      expect(
        await step(storage, records, 'conv_missing', '2026-03-02T12:00:00.000Z', use(bob.id, null, 'm-1', 5_000, 5)),
      ).toBe('conversation_not_found');
      // Stored without usage (a user message): not counted.
      await records.appendMessages(storage, WS, withUser.id, 1);
      const range = { from: '2026-03-01', to: '2026-03-31' };
      expect(await storage.usage.totals({ workspaceId: WS }, { ...range, groupBy: 'day' })).toEqual([
        { key: '2026-03-01', inputTokens: 10, outputTokens: 1, replies: 1 },
        { key: '2026-03-02', inputTokens: 320, outputTokens: 5, replies: 2 },
      ]);
      expect(await storage.usage.totals({ workspaceId: WS }, { ...range, groupBy: 'model' })).toEqual([
        { key: 'm-1', inputTokens: 310, outputTokens: 4, replies: 2 },
        { key: 'm-2', inputTokens: 20, outputTokens: 2, replies: 1 },
      ]);
      expect(await storage.usage.totals({ workspaceId: WS }, { ...range, groupBy: 'user' })).toEqual([
        { key: null, inputTokens: 300, outputTokens: 3, replies: 1 },
        { key: 'u|1', inputTokens: 30, outputTokens: 3, replies: 2 },
      ]);
      const byAgent = await storage.usage.totals({ workspaceId: WS }, { ...range, groupBy: 'agent' });
      expect(byAgent).toEqual(
        [
          { key: ada.id, inputTokens: 30, outputTokens: 3, replies: 2 },
          { key: bob.id, inputTokens: 300, outputTokens: 3, replies: 1 },
        ].sort((a, b) => (a.key < b.key ? -1 : 1)),
      );
      // Only the days asked for; another workspace sees none of it.
      expect(
        await storage.usage.totals({ workspaceId: WS }, { from: '2026-03-02', to: '2026-03-02', groupBy: 'day' }),
      ).toEqual([{ key: '2026-03-02', inputTokens: 320, outputTokens: 5, replies: 2 }]);
      expect(
        await storage.usage.totals({ workspaceId: WS }, { from: '2026-02-01', to: '2026-02-28', groupBy: 'agent' }),
      ).toEqual([]);
      expect(await storage.usage.totals({ workspaceId: OTHER_WS }, { ...range, groupBy: 'day' })).toEqual([]);
    });

    test('a step refused because its conversation is completed is not counted', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { status: 'completed' });
      const usage = { agentId: agent.id, userId: null, model: 'm', inputTokens: 7, outputTokens: 7 };
      expect(await step(storage, records, conversation.id, '2026-03-01T00:00:00.000Z', usage)).toBe(
        'conversation_completed',
      );
      expect(
        await storage.usage.totals({ workspaceId: WS }, { from: '2026-03-01', to: '2026-03-01', groupBy: 'day' }),
      ).toEqual([]);
    });
  });
}
