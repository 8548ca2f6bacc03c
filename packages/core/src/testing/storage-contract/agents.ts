/** @module Storage contract: the agent store. */
import type { Storage } from '../../ports/storage.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { ids, mutateResult, Records, WS } from './fixtures.js';

/** @internal Registers the tests of `storage.agents`. */
export function agentTests(
  t: ContractTestApi,
  open: () => Promise<OpenedFixture<Storage>>,
  skip: readonly string[],
): void {
  const { expect } = t;
  contractGroup(t, 'agents', open, skip, (test) => {
    test('insert then get returns an equal record, optional nulls and nested configuration included', async (storage) => {
      const records = new Records();
      const agent = records.agent({ systemPrompt: 'Be brief.', maxTokens: 512, temperature: null, status: 'inactive' });
      await storage.agents.insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);
    });

    test('get returns null for an unknown id', async (storage) => {
      const records = new Records();
      await records.insertAgent(storage, WS);
      expect(await storage.agents.get({ workspaceId: WS }, records.id('agt'))).toBeNull();
      expect(await storage.agents.get({ workspaceId: WS }, '')).toBeNull();
    });

    test('list is empty with total 0 in an empty workspace', async (storage) => {
      expect(await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({ items: [], total: 0 });
    });

    test('list returns newest first (descending id) whatever the insertion order', async (storage) => {
      const records = new Records();
      const [a, b, c, d] = [records.agent(), records.agent(), records.agent(), records.agent()];
      for (const agent of [c!, a!, d!, b!])
        await storage.agents.insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) });
      const page = await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 });
      expect(ids(page.items)).toEqual(ids([d!, c!, b!, a!]));
      expect(page.items[0]).toEqual(d);
      expect(page.total).toBe(4);
    });

    test('list pages by offset and limit; total counts every agent; offset beyond the end is empty', async (storage) => {
      const records = new Records();
      const agents: string[] = [];
      for (let index = 0; index < 5; index += 1) agents.unshift((await records.insertAgent(storage, WS)).id);
      const page = async (offset: number, limit: number) => {
        const result = await storage.agents.list({ workspaceId: WS }, { offset, limit });
        return { ids: ids(result.items), total: result.total };
      };
      expect(await page(0, 2)).toEqual({ ids: agents.slice(0, 2), total: 5 });
      expect(await page(2, 2)).toEqual({ ids: agents.slice(2, 4), total: 5 });
      expect(await page(4, 2)).toEqual({ ids: agents.slice(4), total: 5 });
      expect(await page(0, 5)).toEqual({ ids: agents, total: 5 });
      expect(await page(1, 100)).toEqual({ ids: agents.slice(1), total: 5 });
      expect(await page(5, 2)).toEqual({ ids: [], total: 5 });
      expect(await page(500, 20)).toEqual({ ids: [], total: 5 });
    });

    test('list filters by status; total counts only matching agents', async (storage) => {
      const records = new Records();
      const statuses = ['active', 'inactive', 'active', 'inactive', 'active'] as const;
      const inserted = [];
      for (const status of statuses) inserted.unshift(await records.insertAgent(storage, WS, { status }));
      const active = inserted.filter((agent) => agent.status === 'active');
      const inactive = inserted.filter((agent) => agent.status === 'inactive');
      const list = (query: Parameters<Storage['agents']['list']>[1]) => storage.agents.list({ workspaceId: WS }, query);

      expect(await list({ offset: 0, limit: 10, status: 'inactive' })).toEqual({ items: inactive, total: 2 });
      expect(await list({ offset: 0, limit: 10, status: 'active' })).toEqual({ items: active, total: 3 });
      expect(await list({ offset: 1, limit: 1, status: 'active' })).toEqual({ items: [active[1]], total: 3 });
      expect(await list({ offset: 3, limit: 1, status: 'active' })).toEqual({ items: [], total: 3 });
      expect((await list({ offset: 0, limit: 2 })).total).toBe(5);
    });

    test('update merges the given fields into the stored agent, moves it between the status lists, and resolves with it', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const other = await records.insertAgent(storage, WS);
      const changed = {
        ...agent,
        name: 'Renamed',
        status: 'inactive' as const,
        configuration: { replaced: true },
        systemPrompt: 'Be brief.',
        updatedAt: '2026-03-02T00:00:00.000Z',
      };
      const result = await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { name: 'Renamed', status: 'inactive', configuration: { replaced: true }, systemPrompt: 'Be brief.' },
        touch: '2026-03-02T00:00:00.000Z',
        event: records.draft(WS, 'agent.updated'),
      });
      expect(result).toEqual({ outcome: 'applied', record: changed });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(changed);
      expect(await storage.agents.get({ workspaceId: WS }, other.id)).toEqual(other);
      expect(
        (await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10, status: 'inactive' })).items,
      ).toEqual([changed]);
      expect(
        (await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10, status: 'active' })).items,
      ).toEqual([other]);
    });

    test('update writes nothing and answers unmet with the stored agent when a condition fails', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      expect(
        await storage.agents.update({ workspaceId: WS }, agent.id, {
          set: { name: 'No' },
          where: [{ field: 'status', equals: 'inactive' }],
        }),
      ).toEqual({ outcome: 'unmet', record: agent });
      expect(
        await storage.agents.update({ workspaceId: WS }, agent.id, { set: { name: 'No' }, ifVersion: [] }),
      ).toEqual({ outcome: 'unmet', record: agent });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(agent);
    });

    test('update resolves with null for a missing agent and stores nothing', async (storage) => {
      const records = new Records();
      const ghost = records.agent();
      expect(
        await storage.agents.update({ workspaceId: WS }, ghost.id, {
          set: { name: 'Ghost' },
          event: records.draft(WS, 'agent.updated'),
        }),
      ).toBeNull();
      expect(await storage.agents.get({ workspaceId: WS }, ghost.id)).toBeNull();
      expect(await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({ items: [], total: 0 });
    });

    test('delete returns the deleted agent, which can no longer be read; a second delete returns null', async (storage) => {
      const records = new Records();
      const kept = await records.insertAgent(storage, WS);
      const agent = await records.insertAgent(storage, WS);
      const deleted = records.draft(WS, 'agent.deleted');
      expect(await storage.agents.delete({ workspaceId: WS }, agent.id, { event: deleted })).toEqual({
        outcome: 'applied',
        record: agent,
      });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toBeNull();
      expect(await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 })).toEqual({
        items: [kept],
        total: 1,
      });
      expect(await storage.agents.update({ workspaceId: WS }, agent.id, { set: { name: 'Back' } })).toBeNull();
      expect(await storage.agents.delete({ workspaceId: WS }, agent.id, { event: deleted })).toBeNull();
      expect(await storage.agents.delete({ workspaceId: WS }, records.id('agt'), { event: deleted })).toBeNull();
    });

    test('records handed out do not alias stored state: mutating an input or a result changes nothing stored', async (storage) => {
      const records = new Records();
      const agent = records.agent();
      const expected = structuredClone(agent);
      await storage.agents.insert({ workspaceId: WS }, agent, { event: records.event(WS, 'agent.created', agent) });
      agent.name = 'mutated input';
      (agent.configuration['tools'] as string[]).push('mutated');

      const got = (await storage.agents.get({ workspaceId: WS }, expected.id))!;
      mutateResult(() => (got.name = 'mutated result'));
      mutateResult(() => ((got.configuration['nested'] as Record<string, unknown>)['level'] = null));
      const listed = (await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items[0]!;
      mutateResult(() => (listed.status = 'inactive'));
      mutateResult(() => ((listed.configuration['tools'] as string[]).length = 0));

      expect(await storage.agents.get({ workspaceId: WS }, expected.id)).toEqual(expected);
      expect((await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 1 })).items).toEqual([expected]);
    });

    test('records handed out do not alias stored state: a later write changes no record read before it', async (storage) => {
      const records = new Records();
      const agent = await records.insertAgent(storage, WS);
      const got = (await storage.agents.get({ workspaceId: WS }, agent.id))!;
      const page = await storage.agents.list({ workspaceId: WS }, { offset: 0, limit: 10 });
      const updated = { ...agent, name: 'Renamed', configuration: { tools: ['changed'] } };
      await storage.agents.update({ workspaceId: WS }, agent.id, {
        set: { name: 'Renamed', configuration: { tools: ['changed'] } },
        event: records.draft(WS, 'agent.updated'),
      });
      await records.insertAgent(storage, WS);

      expect(got).toEqual(agent);
      expect(page).toEqual({ items: [agent], total: 1 });
      expect(await storage.agents.get({ workspaceId: WS }, agent.id)).toEqual(updated);
    });
  });
}
