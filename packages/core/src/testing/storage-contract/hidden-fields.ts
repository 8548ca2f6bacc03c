/**
 * @module Storage contract: hidden fields (ports/storage.ts, "Hidden fields": an agent's tools
 * secret, a paused conversation's tool answers) are stored and read back, but no event carries them.
 */
import type { Storage } from '../../ports/storage.js';
import type { AgentRecord, Conversation, DomainEvent } from '../../types.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { drainOutbox, logOf } from './event-recording.js';
import { Records, WS } from './fixtures.js';

const SECRET = 'whsec_hiddenToolsSecretOfTheContract0001';
const ANSWERS = [
  {
    id: 'call_1',
    name: 'lookup',
    arguments: {},
    kind: 'client',
    requiresApproval: false,
    answer: { output: 'hidden tool output' },
  },
];

/** Fails when `events` mention a hidden field or its value anywhere. */
function expectNoneHidden(t: ContractTestApi, events: readonly DomainEvent[]): void {
  for (const event of events) {
    const json = JSON.stringify(event);
    for (const leak of ['toolsSecret', SECRET, 'toolAnswers', 'hidden tool output'])
      t.expect(json.includes(leak), `${event.type} carries ${leak}`).toBe(false);
  }
}

/** @internal Registers the tests of hidden fields. */
export function hiddenFieldTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'hidden fields', open, skip, (test) => {
    test("an agent's tools secret is read back but in no agent.created/updated/deleted event, whoever built its data", async (storage) => {
      const records = new Records();
      const agent: AgentRecord = { ...records.agent(), toolsSecret: SECRET };
      // The caller's event data carries the secret by mistake: the store leaves it out.
      await storage.agents.insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) });
      expect((await storage.agents.get({ workspaceId: WS }, agent.id))?.toolsSecret).toBe(SECRET);
      const updated = await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { name: 'Renamed' },
        event: records.draft(WS, 'agent.updated'),
      });
      expect(updated?.record.toolsSecret).toBe(SECRET);
      const rotated = await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { toolsSecret: `${SECRET}2` },
        event: records.draft(WS, 'agent.updated'),
      });
      expect(rotated?.record.toolsSecret).toBe(`${SECRET}2`);
      const unmet = await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { toolsSecret: 'never' },
        where: [{ field: 'toolsSecret', equals: null }],
      });
      expect(unmet?.outcome).toBe('unmet');
      expect(
        (await storage.agents.delete({ workspaceId: WS }, agent.id, { event: records.draft(WS, 'agent.deleted') }))
          ?.record.toolsSecret,
      ).toBe(`${SECRET}2`);
      const log = await logOf(storage);
      expect(log.map((event) => event.type)).toEqual([
        'agent.created',
        'agent.updated',
        'agent.updated',
        'agent.deleted',
      ]);
      const { toolsSecret: _secret, ...shown } = agent;
      expect(log[0]!.data).toEqual(shown);
      expect(log[1]!.data).toEqual({ ...shown, name: 'Renamed' });
      expectNoneHidden(t, log);
      expectNoneHidden(t, await drainOutbox(storage));
    });

    test("a conversation's tool answers are read back but in no conversation.completed/deleted event", async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const conversation = await records.insertConversation(storage, WS, agent.id);
      const set = { toolAnswers: ANSWERS } as Partial<Conversation>;
      await storage.conversations.update({ workspaceId: WS }, conversation.id, { set, keepVersion: true });
      expect(
        ((await storage.conversations.get({ workspaceId: WS }, conversation.id)) as { toolAnswers?: unknown } | null)
          ?.toolAnswers,
      ).toEqual(ANSWERS);
      await storage.conversations.update({ workspaceId: WS }, conversation.id, {
        set: { status: 'completed' },
        event: records.draft(WS, 'conversation.completed'),
      });
      await storage.conversations.delete({ workspaceId: WS }, conversation.id, {
        event: records.draft(WS, 'conversation.deleted'),
      });
      const log = await logOf(storage);
      expect(log.map((event) => event.type)).toEqual([
        'agent.created',
        'conversation.started',
        'conversation.completed',
        'conversation.deleted',
      ]);
      expect((log[2]!.data as Conversation).status).toBe('completed');
      expect((log[3]!.data as Conversation).id).toBe(conversation.id);
      expectNoneHidden(t, log);
    });
  });
}
