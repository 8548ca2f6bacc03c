/** @module Agents on Redis: a HASH of records, an index of all agents and one per status. */
import type { Agent, AgentStatus, DomainEvent, PageResult } from '@parley/core';
import {
  AGENT_STATUSES,
  type WorkspaceScope,
  type AgentStore,
  type Change,
  type DeleteOptions,
  type EventDraft,
  type OffsetPage,
  type WriteResult,
} from '@parley/core/adapter';
import { workspaceKeys } from '../keys.js';
import { strings } from '../script.js';
import { AGENT_DELETE } from './agent-store.lua.js';
import { finishCascade } from './cascade.js';
import type { EventLog } from './event-log.js';
import { changeArgs, conditionArgs, decodeRecord, encodeRecord } from './record-format.js';
import { PAGE, RECORD_INSERT, RECORD_UPDATE } from './records.lua.js';
import { pageOf, writeResult } from './record-replies.js';

/**
 * {@link AgentStore} on Redis. Every write is one script that checks its preconditions, merges its
 * change and records its event in one step (records.lua.ts); `delete` then removes the agent's
 * conversations in bounded batches (see `finishCascade`). Faults reject with `service_unavailable`.
 */
export function agentStore(log: EventLog): AgentStore {
  const { runner } = log;
  const keysOf = (workspaceId: string) => workspaceKeys(runner.prefix, workspaceId);

  return {
    async insert(scope: WorkspaceScope, agent: Agent, { event }: { event: DomainEvent }): Promise<void> {
      const keys = keysOf(scope.workspaceId);
      const stored = encodeRecord(agent);
      await log.write(
        RECORD_INSERT,
        scope,
        {
          keys: { hash: keys.agent, indexes: [keys.agents, keys.agentsByStatus(agent.status)] },
          args: { id: agent.id, stored },
        },
        event,
      );
    },

    async get(scope: WorkspaceScope, id: string): Promise<Agent | null> {
      const raw = await runner.hget(keysOf(scope.workspaceId).agent, id, scope);
      return raw === null ? null : decodeRecord<Agent>(raw);
    },

    /** O(log n + limit) by rank in the index; `total` is ZCARD. */
    async list(
      scope: WorkspaceScope,
      { offset, limit, status }: OffsetPage & { status?: AgentStatus },
    ): Promise<PageResult<Agent>> {
      const keys = keysOf(scope.workspaceId);
      const index = status === undefined ? keys.agents : keys.agentsByStatus(status);
      return pageOf<Agent>(
        await runner.script(PAGE, { keys: { index, hash: keys.agent }, args: { offset, limit } }, scope),
      );
    },

    /** One script (records.lua.ts `RECORD_UPDATE`); a change of `status` moves the agent between the status indexes. */
    async update(scope: WorkspaceScope, id: string, change: Change<Agent>): Promise<WriteResult<Agent> | null> {
      const keys = keysOf(scope.workspaceId);
      const status = change.set?.status;
      const reply = await log.write(
        RECORD_UPDATE,
        scope,
        {
          keys: {
            hash: keys.agent,
            leave: status === undefined ? [] : AGENT_STATUSES.map((each) => keys.agentsByStatus(each)),
            join: status === undefined ? [] : [keys.agentsByStatus(status)],
          },
          args: { id, ...changeArgs(change) },
        },
        change.event,
      );
      return writeResult<Agent>(reply);
    },

    /**
     * Removes the agent and its index entries in one script that records `agent.deleted` — from
     * then on it cannot be read and no conversation can be inserted for it — then deletes its
     * conversations and messages in bounded batches before resolving. Any cascade an earlier,
     * interrupted delete left pending in the workspace is finished too.
     */
    async delete(
      scope: WorkspaceScope,
      id: string,
      { event, ...conditions }: DeleteOptions & { event: EventDraft },
    ): Promise<WriteResult<Agent> | null> {
      const keys = keysOf(scope.workspaceId);
      const [outcome, stored, ...pending] = strings(
        await log.write(
          AGENT_DELETE,
          scope,
          {
            keys: {
              agent: keys.agent,
              indexes: [keys.agents, ...AGENT_STATUSES.map((status) => keys.agentsByStatus(status))],
              cascades: keys.cascades,
            },
            args: { id, ...conditionArgs(conditions) },
          },
          event,
        ),
      );
      for (const agentId of pending) await finishCascade(runner, scope.workspaceId, agentId);
      return outcome === 'gone'
        ? null
        : { outcome: outcome as 'applied' | 'unmet', record: decodeRecord<Agent>(stored!) };
    },
  };
}
