/** @module Storage contract: workspaces never see, count or change each other's records. */
import type { Storage } from '../../ports/storage.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { OTHER_WS, Records, WS } from './fixtures.js';

const EMPTY = { items: [], total: 0 };

/** @internal Registers the workspace isolation tests of every store. */
export function isolationTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'workspace isolation', open, skip, (test) => {
    test('agents: another workspace cannot get, list, count, update or delete them', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      expect(await storage.agents.get({ workspaceId: OTHER_WS }, agent.id)).toBeNull();
      expect(await storage.agents.list({ workspaceId: OTHER_WS }, { offset: 0, limit: 10 })).toEqual(EMPTY);
      expect(await storage.agents.list({ workspaceId: OTHER_WS }, { offset: 0, limit: 10, status: 'active' })).toEqual(
        EMPTY,
      );
      expect(
        await storage.agents.update({ workspaceId: OTHER_WS }, agent.id, { set: { name: 'Hijacked' } }),
      ).toBeNull();
      expect(
        await storage.agents.delete({ workspaceId: OTHER_WS }, agent.id, {
          event: records.draft(OTHER_WS, 'agent.deleted'),
        }),
      ).toBeNull();
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);
      expect(await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [agent],
        total: 1,
      });
    });

    test('agents: the same id in two workspaces is two independent records', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const twin = { ...agent, name: 'Twin' };
      await storage.agents.insert({ workspaceId: OTHER_WS }, twin, {
        event: records.event(OTHER_WS, 'agent.created', twin),
      });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);
      expect(await storage.agents.get({ workspaceId: OTHER_WS }, agent.id)).toEqual(twin);
      expect(
        await storage.agents.delete({ workspaceId: OTHER_WS }, agent.id, {
          event: records.draft(OTHER_WS, 'agent.deleted'),
        }),
      ).toEqual({ outcome: 'applied', record: twin });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);
    });

    test('conversations: another workspace cannot use the agent, nor get, list, count or update them', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id, { userId: 'u1' });
      const foreign = records.conversation(agent.id);
      expect(
        await storage.conversations.insert({ workspaceId: OTHER_WS }, foreign, {
          event: records.event(OTHER_WS, 'conversation.started', foreign),
        }),
      ).toBe('agent_not_found');
      expect(await storage.conversations.get({ workspaceId: OTHER_WS }, conversation.id)).toBeNull();
      expect(await storage.conversations.list({ workspaceId: OTHER_WS }, { offset: 0, limit: 10 })).toEqual(EMPTY);
      expect(
        await storage.conversations.list({ workspaceId: OTHER_WS }, { offset: 0, limit: 10, agentId: agent.id }),
      ).toEqual(EMPTY);
      expect(
        await storage.conversations.list(
          { workspaceId: OTHER_WS },
          { offset: 0, limit: 10, userId: 'u1', status: 'active' },
        ),
      ).toEqual(EMPTY);
      expect(
        await storage.conversations.update({ workspaceId: OTHER_WS }, conversation.id, {
          set: { status: 'completed' },
        }),
      ).toBeNull();
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual(conversation);
      expect(await storage.conversations.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [conversation],
        total: 1,
      });
    });

    test('messages: another workspace cannot append to or page the conversation', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const messages = await records.appendMessages(storage, WS, conversation.id, 3);
      const foreign = records.message(conversation.id);
      expect(
        await storage.messages.append({ workspaceId: OTHER_WS }, foreign, { event: records.sent(OTHER_WS, foreign) }),
      ).toBe('conversation_not_found');
      expect(await storage.messages.page({ workspaceId: OTHER_WS }, conversation.id, { limit: 10 })).toEqual({
        messages: [],
        hasMore: false,
      });
      expect(
        await storage.messages.page({ workspaceId: OTHER_WS }, conversation.id, { before: messages[2]!.id, limit: 10 }),
      ).toBeNull();
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages,
        hasMore: false,
      });
    });

    test('webhook endpoints: another workspace cannot get, list, count, find as subscribed, update or delete them', async (storage) => {
      const records = new Records();
      const endpoint = records.endpoint();
      await storage.webhookEndpoints.insert({ workspaceId: WS }, endpoint);
      expect(await storage.webhookEndpoints.get({ workspaceId: OTHER_WS }, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.list({ workspaceId: OTHER_WS }, { offset: 0, limit: 20 })).toEqual(EMPTY);
      expect(await storage.webhookEndpoints.subscribed({ workspaceId: OTHER_WS }, 'agent.created')).toEqual([]);
      expect(
        await storage.webhookEndpoints.update({ workspaceId: OTHER_WS }, endpoint.id, {
          set: { url: 'https://evil.example.com/' },
        }),
      ).toBeNull();
      expect(await storage.webhookEndpoints.delete({ workspaceId: OTHER_WS }, endpoint.id)).toBeNull();
      expect(await storage.webhookEndpoints.get({ workspaceId: WS }, endpoint.id)).toEqual(endpoint);
      expect(await storage.webhookEndpoints.list({ workspaceId: WS }, { offset: 0, limit: 20 })).toEqual({
        items: [endpoint],
        total: 1,
      });
    });

    test('agent delete cascade: deleting in another workspace removes nothing', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const messages = await records.appendMessages(storage, WS, conversation.id, 2);
      expect(
        await storage.agents.delete({ workspaceId: OTHER_WS }, agent.id, {
          event: records.draft(OTHER_WS, 'agent.deleted'),
        }),
      ).toBeNull();
      const lastMessageAt = messages.at(-1)!.createdAt;
      expect(await storage.conversations.get({ workspaceId: WS }, conversation.id)).toEqual({
        ...conversation,
        lastMessageAt,
        updatedAt: lastMessageAt,
      });
      expect(await storage.messages.page({ workspaceId: WS }, conversation.id, { limit: 10 })).toEqual({
        messages,
        hasMore: false,
      });
    });
  });
}
