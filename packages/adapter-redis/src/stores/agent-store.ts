/** @module Agents on Redis: a HASH of records, an index of all agents and one per status. */
import { AGENT_STATUSES, ErrorCode, ParleyError, type Agent, type AgentStatus, type AgentStore, type DomainEvent, type OffsetPage, type PageResult, type Update } from '@parley/core';
import { workspaceKeys } from '../keys.js';
import { pageReply, strings } from '../script.js';
import { AGENT_DELETE } from './agent-store.lua.js';
import { finishCascade } from './cascade.js';
import type { EventLog } from './event-log.js';
import { PAGE, RECORD_INSERT, RECORD_UPDATE } from './records.lua.js';
import { compareAndSet, UPDATE_ATTEMPTS, type CasOutcome } from './update.js';

/**
 * {@link AgentStore} on Redis. Every write is one script that records its event with the change;
 * `update` and `delete` read the record first (compare-and-set, see update.ts), and `delete`
 * then removes the agent's conversations in bounded batches (see `finishCascade`). Faults reject
 * with `service_unavailable`.
 */
export class RedisAgentStore implements AgentStore {
  constructor(private readonly log: EventLog) {}

  private get runner() {
    return this.log.runner;
  }

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  private read(workspaceId: string, id: string): Promise<string | null> {
    return this.runner.run((client) => client.hget(this.keys(workspaceId).agent, id));
  }

  async insert(workspaceId: string, agent: Agent, event: DomainEvent): Promise<void> {
    const keys = this.keys(workspaceId);
    const recording = this.log.params(workspaceId, keys, event);
    await this.log.write(
      workspaceId,
      () =>
        this.runner.script(RECORD_INSERT, {
          keys: { hash: keys.agent, indexes: [keys.agents, keys.agentsByStatus(agent.status)], ...recording.keys },
          args: { id: agent.id, json: JSON.stringify(agent), ...recording.args },
        }),
      () => true,
    );
  }

  async get(workspaceId: string, id: string): Promise<Agent | null> {
    const raw = await this.read(workspaceId, id);
    return raw === null ? null : (JSON.parse(raw) as Agent);
  }

  /** O(log n + limit) by rank in the index; `total` is ZCARD. */
  async list(workspaceId: string, { offset, limit, status }: OffsetPage & { status?: AgentStatus }): Promise<PageResult<Agent>> {
    const keys = this.keys(workspaceId);
    const index = status === undefined ? keys.agents : keys.agentsByStatus(status);
    return pageReply<Agent>(await this.runner.script(PAGE, { keys: { index, hash: keys.agent }, args: { offset, limit } }));
  }

  /** Compare-and-set on the stored JSON, moving the agent between status indexes; see update.ts. */
  async update(workspaceId: string, id: string, update: Update<Agent>): Promise<Agent | null> {
    const keys = this.keys(workspaceId);
    await this.log.register(workspaceId);
    return compareAndSet(
      () => this.read(workspaceId, id),
      update,
      async (_current, { record, event }, raw) => {
        const recording = this.log.params(workspaceId, keys, event);
        const outcome = (await this.runner.script(RECORD_UPDATE, {
          keys: {
            hash: keys.agent,
            leave: AGENT_STATUSES.map((status) => keys.agentsByStatus(status)),
            join: [keys.agentsByStatus(record.status)],
            ...recording.keys,
          },
          args: { id, expected: raw, json: JSON.stringify(record), ...recording.args },
        })) as CasOutcome;
        if (outcome === 'ok' && event) void this.log.hint(workspaceId);
        return outcome;
      },
    );
  }

  /**
   * Removes the agent and its index entries in one script that records `agent.deleted` — from
   * then on it cannot be read and no conversation can be inserted for it — then deletes its
   * conversations and messages in bounded batches before resolving. Any cascade an earlier,
   * interrupted delete left pending in the workspace is finished too.
   */
  async delete(workspaceId: string, id: string, event: (deleted: Agent) => DomainEvent): Promise<Agent | null> {
    const keys = this.keys(workspaceId);
    await this.log.register(workspaceId);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
      const raw = await this.read(workspaceId, id);
      const deleted = raw === null ? null : (JSON.parse(raw) as Agent);
      // Built before anything is written: if it throws, nothing is deleted.
      const recording = this.log.params(workspaceId, keys, deleted ? event(deleted) : undefined);
      const [outcome, ...pending] = strings(
        await this.runner.script(AGENT_DELETE, {
          keys: {
            agent: keys.agent,
            indexes: [keys.agents, ...AGENT_STATUSES.map((status) => keys.agentsByStatus(status))],
            cascades: keys.cascades,
            ...recording.keys,
          },
          args: { id, expected: raw ?? '', ...recording.args },
        }),
      );
      if (outcome === 'changed') continue;
      if (outcome === 'ok') void this.log.hint(workspaceId);
      for (const agentId of pending) await finishCascade(this.runner, workspaceId, agentId);
      return outcome === 'ok' ? deleted : null;
    }
    throw new ParleyError(ErrorCode.serviceUnavailable, 'The agent kept changing during the delete; try again.');
  }
}
