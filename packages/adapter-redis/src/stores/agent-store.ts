/** @module Agents on Redis: a HASH of records, an index of all agents and one per status. */
import { AGENT_STATUSES, type Admission, type Agent, type AgentStatus, type AgentStore, type Change, type DeleteConditions, type DomainEvent, type EventDraft, type OffsetPage, type PageResult, type WriteResult } from '@parley/core';
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
export class RedisAgentStore implements AgentStore {
  constructor(private readonly log: EventLog) {}

  private get runner() {
    return this.log.runner;
  }

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async insert(workspaceId: string, agent: Agent, event: DomainEvent, admission?: Admission): Promise<void> {
    const keys = this.keys(workspaceId);
    const stored = encodeRecord(agent);
    await this.log.write(RECORD_INSERT, workspaceId, { keys: { hash: keys.agent, indexes: [keys.agents, keys.agentsByStatus(agent.status)] }, args: { id: agent.id, stored } }, event, admission);
  }

  async get(workspaceId: string, id: string, admission?: Admission): Promise<Agent | null> {
    const raw = await this.runner.hget(this.keys(workspaceId).agent, id, admission);
    return raw === null ? null : decodeRecord<Agent>(raw);
  }

  /** O(log n + limit) by rank in the index; `total` is ZCARD. */
  async list(workspaceId: string, { offset, limit, status }: OffsetPage & { status?: AgentStatus }, admission?: Admission): Promise<PageResult<Agent>> {
    const keys = this.keys(workspaceId);
    const index = status === undefined ? keys.agents : keys.agentsByStatus(status);
    return pageOf<Agent>(await this.runner.script(PAGE, { keys: { index, hash: keys.agent }, args: { offset, limit } }, admission));
  }

  /** One script (records.lua.ts `RECORD_UPDATE`); a change of `status` moves the agent between the status indexes. */
  async update(workspaceId: string, id: string, change: Change<Agent>, admission?: Admission): Promise<WriteResult<Agent> | null> {
    const keys = this.keys(workspaceId);
    const status = change.set?.status;
    const reply = await this.log.write(
      RECORD_UPDATE,
      workspaceId,
      {
        keys: { hash: keys.agent, leave: status === undefined ? [] : AGENT_STATUSES.map((each) => keys.agentsByStatus(each)), join: status === undefined ? [] : [keys.agentsByStatus(status)] },
        args: { id, ...changeArgs(change) },
      },
      change.event,
      admission,
    );
    return writeResult<Agent>(reply);
  }

  /**
   * Removes the agent and its index entries in one script that records `agent.deleted` — from
   * then on it cannot be read and no conversation can be inserted for it — then deletes its
   * conversations and messages in bounded batches before resolving. Any cascade an earlier,
   * interrupted delete left pending in the workspace is finished too.
   */
  async delete(workspaceId: string, id: string, event: EventDraft, conditions: DeleteConditions = {}, admission?: Admission): Promise<WriteResult<Agent> | null> {
    const keys = this.keys(workspaceId);
    const [outcome, stored, ...pending] = strings(
      await this.log.write(
        AGENT_DELETE,
        workspaceId,
        {
          keys: { agent: keys.agent, indexes: [keys.agents, ...AGENT_STATUSES.map((status) => keys.agentsByStatus(status))], cascades: keys.cascades },
          args: { id, ...conditionArgs(conditions) },
        },
        event,
        admission,
      ),
    );
    for (const agentId of pending) await finishCascade(this.runner, workspaceId, agentId);
    return outcome === 'gone' ? null : { outcome: outcome as 'applied' | 'unmet', record: decodeRecord<Agent>(stored!) };
  }
}
